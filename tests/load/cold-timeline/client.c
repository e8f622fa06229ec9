// Client of tests/load/cold-timeline.sh (not part of the test suite): CONNS keep-alive connections to a forward proxy
// on 127.0.0.1:PORT, one thread each, each sending POST http://127.0.0.1:UPSTREAM/ with BODYFILE (application/json, as
// the side-by-side harness's wrk script does) one request at a time for SECONDS; records every request's start (wall
// clock, us since the epoch) and latency (us, monotonic clock), and writes them to OUT, one line per request:
// "start_us latency_us connection", after a line "# begin_us N". A request that fails (connect, write, a non-200, a
// read error or 5 s without an answer) is counted as an error and its connection opened again.
// Usage: client PORT UPSTREAM_PORT BODYFILE CONNS SECONDS OUT
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <strings.h>

static char *req; static size_t reqlen; static int port, upstream; static double dur; static long long deadline_ns;
typedef struct { long long start; int lat; } rec_t;
typedef struct { int id; rec_t *r; long n, cap; long errs; } th_t;
static long long now_ns(int clk) { struct timespec t; clock_gettime(clk, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static int dial(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a = {0};
  a.sin_family = AF_INET; a.sin_port = htons(port); a.sin_addr.s_addr = htonl(0x7f000001);
  int one = 1; setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct timeval tv = {5, 0}; setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(s, (void *)&a, sizeof a) < 0) { close(s); return -1; }
  return s;
}
// read one response; 0 ok, -1 error
static int read_resp(int s, char *buf, size_t cap) {
  size_t have = 0; char *hend = NULL;
  while (!hend) {
    ssize_t k = read(s, buf + have, cap - 1 - have); if (k <= 0) return -1; have += k; buf[have] = 0;
    hend = strstr(buf, "\r\n\r\n");
    if (!hend && have >= cap - 1) return -1;
  }
  if (strncmp(buf, "HTTP/1.1 200", 12) != 0) return -1;
  size_t hlen = hend + 4 - buf; char *cl = strcasestr(buf, "\ncontent-length:");
  if (cl && cl < hend) {
    long n = atol(cl + 16); size_t need = hlen + n;
    while (have < need) { ssize_t k = read(s, buf + have, cap - 1 - have); if (k <= 0) return -1; have += k; }
    return 0;
  }
  // chunked: read until the terminating chunk
  for (;;) {
    buf[have] = 0;
    if (have >= 5 && memcmp(buf + have - 5, "0\r\n\r\n", 5) == 0) return 0;
    if (have >= cap - 1) return -1;
    ssize_t k = read(s, buf + have, cap - 1 - have); if (k <= 0) return -1; have += k;
  }
}
static void *run(void *p) {
  th_t *t = p; char *buf = malloc(65536); int s = -1;
  while (now_ns(CLOCK_MONOTONIC) < deadline_ns) {
    if (s < 0) { s = dial(); if (s < 0) { t->errs++; usleep(1000); continue; } }
    long long t0r = now_ns(CLOCK_REALTIME), t0 = now_ns(CLOCK_MONOTONIC);
    size_t off = 0; int bad = 0;
    while (off < reqlen) { ssize_t k = write(s, req + off, reqlen - off); if (k <= 0) { bad = 1; break; } off += k; }
    if (bad || read_resp(s, buf, 65536) < 0) { t->errs++; close(s); s = -1; continue; }
    long long t1 = now_ns(CLOCK_MONOTONIC);
    if (t->n == t->cap) { t->cap = t->cap ? t->cap * 2 : 4096; t->r = realloc(t->r, t->cap * sizeof(rec_t)); }
    t->r[t->n].start = t0r / 1000; t->r[t->n].lat = (int)((t1 - t0) / 1000); t->n++;
  }
  if (s >= 0) close(s);
  return NULL;
}
int main(int argc, char **argv) {
  if (argc != 7) { fprintf(stderr, "usage: client PORT UPSTREAM_PORT BODYFILE CONNS SECONDS OUT\n"); return 2; }
  port = atoi(argv[1]); upstream = atoi(argv[2]); int conns = atoi(argv[4]); dur = atof(argv[5]);
  if (port < 1 || port > 65535 || upstream < 1 || upstream > 65535 || conns < 1 || conns > 1000 || dur <= 0 || dur > 600) {
    fprintf(stderr, "PORT and UPSTREAM_PORT 1..65535, CONNS 1..1000, SECONDS 0..600\n"); return 2;
  }
  FILE *f = fopen(argv[3], "rb"); if (!f) { perror("body"); return 1; }
  fseek(f, 0, SEEK_END); long bl = ftell(f); fseek(f, 0, SEEK_SET); char *body = malloc(bl); if (fread(body, 1, bl, f) != (size_t)bl) { perror("body"); return 1; } fclose(f);
  req = malloc(bl + 512);
  reqlen = sprintf(req, "POST http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                   "Content-Length: %ld\r\n\r\n", upstream, upstream, bl);
  memcpy(req + reqlen, body, bl); reqlen += bl;
  deadline_ns = now_ns(CLOCK_MONOTONIC) + (long long)(dur * 1e9);
  th_t *ts = calloc(conns, sizeof(th_t)); pthread_t *ps = calloc(conns, sizeof(pthread_t));
  long long begin = now_ns(CLOCK_REALTIME) / 1000;
  for (int i = 0; i < conns; i++) { ts[i].id = i; pthread_create(&ps[i], NULL, run, &ts[i]); }
  long total = 0, errs = 0;
  FILE *o = fopen(argv[6], "w"); if (!o) { perror("out"); return 1; } fprintf(o, "# begin_us %lld\n", begin);
  for (int i = 0; i < conns; i++) { pthread_join(ps[i], NULL); errs += ts[i].errs;
    for (long j = 0; j < ts[i].n; j++) fprintf(o, "%lld %d %d\n", ts[i].r[j].start, ts[i].r[j].lat, i);
    total += ts[i].n;
  }
  fclose(o);
  fprintf(stderr, "requests %ld errors %ld in %.1f s: %.0f req/s\n", total, errs, dur, total / dur);
  return 0;
}
