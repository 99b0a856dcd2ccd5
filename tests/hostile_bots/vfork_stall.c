#include <unistd.h>
/* A parent always waiting in vfork() for a child that spins: stopped, the child keeps its
   parent in uninterruptible sleep (D), which a stop that waits for every thread to reach T
   would wait on until it gave up, each turn. */
int main(void) {
    for (;;) {
        pid_t c = vfork();
        if (c == 0) {
            for (volatile long i = 0; i < 300000000L; i++) {
            }
            _exit(0);
        }
    }
}
