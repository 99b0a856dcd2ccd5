#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>
#include <signal.h>
#include <stdlib.h>
#include <pthread.h>
/* Fork chain from a second thread while the main thread sleeps: the harness looks at
   /proc/<tgid>/stat (the main thread's state) to tell whether a process may be in fork(). */
static int wake;
static void link_main(void);
static void *forker(void *a) {
    for (;;) {
        pid_t c = fork();
        if (c > 0) _exit(0);          /* the parent link ends */
        if (c < 0) { usleep(1000); continue; }
        link_main();
    }
}
static void link_main(void) {
    for (;;) {
        pthread_t t; void *r = 0;
        if (wake) kill(-1, SIGCONT);
        pthread_create(&t, 0, forker, 0);
        pthread_join(t, &r);          /* main thread sleeps (S) while the other forks */
        /* only reached in a child: its one thread came from forker; loop to make a new forker */
    }
}
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    wake = argc > 2 ? atoi(argv[2]) : 0;
    for (int i = 0; i < n; i++)
        mmap(NULL, 4096, (i & 1) ? PROT_READ : PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    link_main();
}
