#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int make_report(const char *name, int n) {
    char *buf = malloc(64);
    if (!buf) return -12;
    snprintf(buf, 64, "report for %s: %d", name, n);
    printf("%s\n", buf);
    free(buf);
    return 0;
}
int classify(int c) {
    switch (c) { case 0: return 10; case 1: return 22; case 2: return 37; case 3: return 41; case 4: return 59; case 5: return 63; default: return -1; }
}
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: report NAME\n"); return 2; }
    make_report(argv[1], classify(argc));
    return 0;
}
