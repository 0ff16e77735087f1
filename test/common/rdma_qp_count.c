/*
 * See rdma_qp_count.h.
 */
#define _GNU_SOURCE

#include "rdma_qp_count.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long test_rdma_qp_count(void)
{
    char line[512], *tok, *save;
    long total = -1;
    int take;
    FILE *p;

    p = popen("rdma resource show 2>/dev/null", "r");
    if (p == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), p) != NULL) {
        take = 0;
        for (tok = strtok_r(line, " \t\n", &save); tok != NULL;
             tok = strtok_r(NULL, " \t\n", &save)) {
            if (take) {
                total = ((total < 0) ? 0 : total) + strtol(tok, NULL, 10);
                break;
            }
            take = !strcmp(tok, "qp");
        }
    }
    if (pclose(p) != 0) {
        return -1;
    }
    return total;
}
