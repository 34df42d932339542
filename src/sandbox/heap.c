// The strict heap (src/sandbox/heap.rs says when it is on): while a byte is set, every
// block the allocator hands out is filled with its complement and every block given back
// with the byte itself, so that code reading memory it never wrote, or memory already
// freed, meets poison instead of whatever the block held.
//
// glibc's own fill (mallopt M_PERTURB) skips the per-thread cache, which hands small blocks
// back unfilled; turning the cache off needs a tunable read only when a process starts, and
// then every run has a heap unlike plain opt's. So the allocator's entry points are defined
// here instead, calling glibc's own allocator: the front doors link this file (their
// definitions take precedence over libc's for the whole process, libc's internal calls and
// the JIT-compiled programs' included), and an external opt gets it as a preloaded library
// (scripts/build-plugin.sh builds ctos-heap.so). With no byte set, each entry point only
// passes the call on: the heap is glibc's, as plain opt has it.

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <string.h>

extern void *__libc_malloc(size_t Size);
extern void __libc_free(void *Block);
extern void *__libc_calloc(size_t Count, size_t Size);
extern void *__libc_realloc(void *Block, size_t Size);
extern void *__libc_memalign(size_t Alignment, size_t Size);

// The fill byte, or -1: the process is single-threaded whenever it is set.
static int FillByte = -1;

// Set the byte (0 to 255), or turn filling off (-1).
void ctos_heap_fill(int Byte) { FillByte = Byte < 0 || Byte > 255 ? -1 : Byte; }

// The whole usable block: a block that grows in place keeps the bytes past what was asked.
static void *handedOut(void *Block) {
  if (FillByte >= 0 && Block)
    memset(Block, FillByte ^ 0xff, malloc_usable_size(Block));
  return Block;
}

void *malloc(size_t Size) { return handedOut(__libc_malloc(Size)); }

void free(void *Block) {
  if (FillByte >= 0 && Block)
    memset(Block, FillByte, malloc_usable_size(Block));
  __libc_free(Block);
}

void *calloc(size_t Count, size_t Size) { return __libc_calloc(Count, Size); }

// Filling, a new block each time: the old one is given back (filled) and the part past
// the old contents is fresh (filled), as a block that moved would be.
void *realloc(void *Block, size_t Size) {
  if (FillByte < 0)
    return __libc_realloc(Block, Size);
  if (!Block)
    return malloc(Size);
  if (Size == 0) {
    free(Block);
    return NULL;
  }
  size_t Old = malloc_usable_size(Block);
  void *Moved = malloc(Size);
  if (!Moved)
    return NULL;
  memcpy(Moved, Block, Old < Size ? Old : Size);
  free(Block);
  return Moved;
}

void *memalign(size_t Alignment, size_t Size) { return handedOut(__libc_memalign(Alignment, Size)); }

void *aligned_alloc(size_t Alignment, size_t Size) { return memalign(Alignment, Size); }

int posix_memalign(void **Out, size_t Alignment, size_t Size) {
  if (Alignment == 0 || Alignment % sizeof(void *) != 0 || (Alignment & (Alignment - 1)) != 0)
    return EINVAL;
  void *Block = memalign(Alignment, Size);
  if (!Block)
    return ENOMEM;
  *Out = Block;
  return 0;
}
