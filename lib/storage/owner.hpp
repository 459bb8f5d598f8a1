// Private: who made a temporary, written into its name, so that a later run can
// tell a temporary whose maker is gone (to be removed) from one still being
// written, on this machine or on another one that shares the file system.
//
// The owner field is `<pid>@<kernel>`: the process id, and 16 hex digits of a
// token of the host name, the kernel's boot id (/proc/sys/kernel/random/boot_id)
// and the process's PID namespace (/proc/self/ns/pid). A PID says whether its
// process runs only inside the PID namespace of the kernel that gave it, so a
// temporary is taken as stale only when its kernel field equals this process's
// and its PID runs no process here. A temporary made on another host, in
// another container, or before a reboot is never taken as stale: tessera cannot
// prove its maker gone, and a user's live write matters more than a leftover.
//
// Why names and not advisory locks (flock, OFD locks) held while writing: on a
// shared file system whose locks are local to each client (Lustre's localflock,
// NFS mounted with nolock, some FUSE file systems), another host's lock is
// invisible, so "lockable, hence stale" would delete a live write on exactly the
// systems this guards; and a lock needs a descriptor held across a whole write,
// for a folder of thousands of chunk files too. A name needs neither.
//
// Names of earlier versions, `<pid>-<random>` (no `@`), are still recognised
// and judged by the local PID alone, as those versions did.
#pragma once

#include <string>
#include <string_view>

namespace tessera::storage {

//! This process's owner field, `<pid>@<kernel>` (computed again after a fork).
std::string owner_field();

//! Whether the owner field at the start of `rest` (the part of a name after its
//! marker: `<pid>@<kernel>-...`, or `<pid>-...` as earlier versions wrote) is
//! known to be gone: same kernel and PID namespace as this process, and no
//! process with that PID. False for anything else, unparsable text included.
bool owner_gone(std::string_view rest);

}  // namespace tessera::storage
