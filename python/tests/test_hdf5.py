"""tessera.array.from_hdf5 / from_netcdf against h5py and netCDF4, and store to FILE.h5:/x."""
import pathlib

import numpy as np
import pytest

import tessera.array as ta

h5py = pytest.importorskip("h5py")


def test_from_hdf5_reads_what_h5py_wrote_and_store_writes_what_h5py_reads(tmp_path: pathlib.Path) -> None:
    a = np.arange(7 * 5, dtype=">f4").reshape(7, 5)
    with h5py.File(tmp_path / "in.h5", "w") as f:
        f.create_dataset("g/x", data=a, chunks=(3, 2), compression="gzip", shuffle=True)
    x = ta.from_hdf5(str(tmp_path / "in.h5"), "/g/x")
    assert x.chunks == ((3, 3, 1), (2, 2, 1))
    np.testing.assert_array_equal(x.compute(), a)
    np.testing.assert_array_equal(ta.from_hdf5(str(tmp_path / "in.h5"), "g/x", chunks=(4, -1)).compute(), a)
    ta.store(x * 2, str(tmp_path / "out.h5") + ":/y", codec="gzip:4")
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert f["y"].compression == "gzip" and f["y"].shuffle
        np.testing.assert_array_equal(f["y"][...], a * 2)
    with pytest.raises(Exception, match="no dataset /nope in the file; it holds: /g \\(group\\), /g/x \\(dataset\\)"):
        ta.from_hdf5(str(tmp_path / "in.h5"), "nope")


def test_from_netcdf_reads_a_variable_netcdf4_wrote(tmp_path: pathlib.Path) -> None:
    netCDF4 = pytest.importorskip("netCDF4")
    with netCDF4.Dataset(tmp_path / "in.nc", "w") as n:
        n.createDimension("t", 4)
        v = n.createVariable("v", "i2", ("t",), zlib=True)
        v[:] = [1, 2, 3, 4]
    np.testing.assert_array_equal(ta.from_netcdf(str(tmp_path / "in.nc"), "v").compute(), [1, 2, 3, 4])
