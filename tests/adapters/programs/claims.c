/* Compiled by the tests (cc -O0): the calls of `summarize` are reported by the native
   provider's callees and must be named by the pseudo-C the angr adapter decompiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int weigh(const char *word) {
    int total = 0;
    for (size_t i = 0; word[i] != '\0'; i++) {
        total += word[i] * (int)(i + 1);
    }
    return total;
}

int summarize(const char *word, int repeat) {
    size_t length = strlen(word);
    char *copy = malloc(length + 1);
    if (copy == NULL) {
        return -1;
    }
    memcpy(copy, word, length + 1);
    int weight = weigh(copy);
    printf("summary of %s: %d bytes, weight %d, repeated %d\n", copy, (int)length, weight, repeat);
    free(copy);
    return weight;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs("usage: claims WORD\n", stderr);
        return 2;
    }
    return summarize(argv[1], argc) > 0 ? 0 : 1;
}
