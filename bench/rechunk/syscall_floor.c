// The file system's floor for a zarr v2 store of one file per chunk, for
// bench/rechunk/tiny_chunks.sh: what any reader must do per chunk file (open,
// fstat to refuse a non-regular file, read, close) and nothing else, over
// THREADS threads that take the rows in turn.
//
// Usage: syscall_floor STORE SIDE THREADS   (chunk files STORE/i.j, i, j < SIDE)
// Prints the sum of the bytes read, so that the reads cannot be left out.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char* store;
static int side, threads;

static void* read_rows(void* first_row) {
  const int dir = open(store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    perror(store);
    exit(1);
  }
  unsigned long sum = 0;
  char name[64];
  for (int i = (int)(long)first_row; i < side; i += threads) {
    for (int j = 0; j < side; ++j) {
      snprintf(name, sizeof name, "%d.%d", i, j);
      const int fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      struct stat st;
      unsigned char byte;
      if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || pread(fd, &byte, 1, 0) != 1) {
        perror(name);
        exit(1);
      }
      sum += byte;
      close(fd);
    }
  }
  close(dir);
  return (void*)sum;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s STORE SIDE THREADS\n", argv[0]);
    return 2;
  }
  store = argv[1];
  side = atoi(argv[2]);
  threads = atoi(argv[3]);
  if (side <= 0 || threads <= 0 || threads > 256) {
    fprintf(stderr, "expected SIDE > 0 and 0 < THREADS <= 256, found %s and %s\n", argv[2], argv[3]);
    return 2;
  }
  pthread_t t[256];
  for (long k = 0; k < threads; ++k) pthread_create(&t[k], NULL, read_rows, (void*)k);
  unsigned long sum = 0;
  for (int k = 0; k < threads; ++k) {
    void* part;
    pthread_join(t[k], &part);
    sum += (unsigned long)part;
  }
  printf("%lu\n", sum);
  return 0;
}
