// LLVM issue 166496: indvars miscompiles this loop under default<O1> (LLVM 13 to 19, not 22).
#include <stdio.h>

long cnt;

void bar(void) {
    ++cnt;
}

void foo(void) {
    for (float f = 25.0; f <= 100000000.0; f += 17.0)
        bar();
}

int main(void) {
    foo();
    printf("%ld\n", cnt);
    return 0;
}
