// A small program with loops, globals and a call: enough for most passes to do something.
#include <stdio.h>

static int table[64];

static int mix(int x, int y) { return (x * 31) ^ (y >> 2); }

int main(void) {
  int acc = 7;
  for (int i = 0; i < 64; i++)
    table[i] = mix(i, acc + i);
  for (int round = 0; round < 4; round++)
    for (int i = 1; i < 64; i++)
      acc += table[i] - table[i - 1] * round;
  printf("acc = %d\n", acc);
  return 0;
}
