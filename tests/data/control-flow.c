/* Control flow that csmith rarely emits (multi-way switches, goto, irreducible loops, loops
   that never exit), to check region detection against LLVM. Not meant to run. */
int g;

int early_returns(int a, int b) {
  if (a > b) return a;
  while (a < b) {
    if (a == 7) return -1;
    a += 2;
  }
  return b;
}

int switches(int x) {
  int r = 0;
  switch (x) {
  case 0: r += 1;
  case 1: r += 2; break;
  case 2: case 3: r = 5; break;
  case 4: return 9;
  default: r = -x;
  }
  for (int i = 0; i < x; i++) {
    switch (i & 3) {
    case 0: continue;
    case 1: r++; break;
    default: if (r > 100) goto out;
    }
    r *= 2;
  }
out:
  return r;
}

int irreducible(int x) {
  if (x & 1) goto second;
first:
  x += 3;
  if (x > 50) return x;
second:
  x *= 2;
  if (x < 1000) goto first;
  return x;
}

int nested(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) {
    int j = 0;
    do {
      if ((i ^ j) & 1) { s += i; if (s > 77) break; } else s -= j;
      j++;
    } while (j < i);
    while (s > 10 && s % 3) s--;
  }
  return s;
}

void spin(int x) {
  for (;;) {
    if (x > 3) g++;
    else g--;
  }
}

int spin_after_work(int x) {
  if (x) return 1;
  while (1) g += x;
}

void two_spins(int x) {
  while (x > 0) {
    if (x == 5) for (;;) { if (g) g--; else g += 2; }
    x--;
  }
  for (;;) { g ^= x; if (g > 4) { while (1) g++; } }
}

int spin_or_return(int x) {
  for (int i = 0; i < x; i++) {
    if (i == 3) { l: g++; if (g & 1) goto l; else goto m; m: g--; goto l; }
  }
  return x;
}

int main(void) { return early_returns(1, 5) + switches(3) + irreducible(4) + nested(9); }
