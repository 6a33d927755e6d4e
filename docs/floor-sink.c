// floor-sink: the least an SMTP sink can do on Linux, as a floor for
// smtp-sink's own CPU per message (docs/smtp-tools.md). It listens on
// HOST:PORT (an IPv4 address) and answers what Postfix's smtp-source
// sends: a greeting,
// 250 to every command line but DATA (354) and QUIT (221, then close), and
// 250 once a message's data ends with CRLF.CRLF. One epoll_wait a wake-up,
// one read(2) a ready connection, one write(2) a read's replies. Nothing
// is parsed beyond a line's first four bytes, no limit is kept, no reply
// waits for room (a short write ends the connection). Once SESSIONS
// sessions have ended with QUIT it prints its CPU (user + system,
// getrusage) per message since the first connection, and exits.
//
//	cc -O2 -o floor-sink docs/floor-sink.c
//	./floor-sink HOST:PORT SESSIONS
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

enum { maxfd = 65536, bufsize = 65536 };

struct conn {
	int data;       // in a message's data
	char tail[4];   // the data's last 4 bytes so far (a match across reads)
	char line[512]; // a command line so far
	int linelen;
};

static struct conn *conns[maxfd];

static double cpu(void) {
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec * 1e-6;
}

static void drop(int ep, int fd) {
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	free(conns[fd]);
	conns[fd] = NULL;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: floor-sink HOST:PORT SESSIONS\n");
		return 2;
	}
	long want = atol(argv[2]), quits = 0, msgs = 0;
	char *colon = strrchr(argv[1], ':');
	struct sockaddr_in a = {.sin_family = AF_INET};
	if (!colon || want <= 0) {
		fprintf(stderr, "usage: floor-sink HOST:PORT SESSIONS\n");
		return 2;
	}
	*colon = 0;
	a.sin_port = htons(atoi(colon + 1));
	if (inet_pton(AF_INET, argv[1], &a.sin_addr) != 1) {
		fprintf(stderr, "floor-sink: %s: not an IPv4 address\n", argv[1]);
		return 2;
	}
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1024) < 0) {
		perror("listen");
		return 1;
	}
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls}, evs[256];
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
	// A read's replies: at most 9 bytes for each byte read (a line "\n").
	static char in[bufsize], out[9 * bufsize];
	double start = -1;
	while (quits < want) {
		int n = epoll_wait(ep, evs, 256, -1);
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == ls) {
				int c;
				while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					if (c >= maxfd) {
						close(c);
						continue;
					}
					if (start < 0)
						start = cpu();
					setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); // as Go does
					conns[c] = calloc(1, sizeof *conns[c]);
					ev.events = EPOLLIN;
					ev.data.fd = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
					write(c, "220 floor-sink\r\n", 16);
				}
				continue;
			}
			struct conn *k = conns[fd];
			ssize_t r = read(fd, in, sizeof in);
			if (r <= 0) {
				drop(ep, fd);
				continue;
			}
			int o = 0, quit = 0;
			for (ssize_t p = 0; p < r;) {
				if (k->data) {
					// The end of the data: CRLF.CRLF, in this read or
					// begun in the tail of the last.
					size_t m = r - p, h = m < 4 ? m : 4, end;
					char w[8];
					memcpy(w, k->tail, 4);
					memcpy(w + 4, in + p, h);
					char *e = memmem(w, 4 + h, "\r\n.\r\n", 5);
					if (e) {
						end = e + 5 - (w + 4);
					} else if ((e = memmem(in + p, m, "\r\n.\r\n", 5))) {
						end = e + 5 - (in + p);
					} else {
						memcpy(k->tail, w + h, 4 - h);
						memcpy(k->tail + 4 - h, in + p + m - h, h);
						p += m;
						continue;
					}
					p += end;
					k->data = 0;
					msgs++;
					memcpy(out + o, "250 ok\r\n", 8), o += 8;
					continue;
				}
				char *nl = memchr(in + p, '\n', r - p);
				size_t m = nl ? (size_t)(nl + 1 - (in + p)) : (size_t)(r - p);
				if (k->linelen + m <= sizeof k->line)
					memcpy(k->line + k->linelen, in + p, m);
				k->linelen += m;
				p += m;
				if (!nl)
					continue;
				if (k->linelen >= 4 && !strncasecmp(k->line, "DATA", 4)) {
					memcpy(out + o, "354 go\r\n", 8), o += 8;
					k->data = 1;
					memcpy(k->tail, "\0\0\r\n", 4);
				} else if (k->linelen >= 4 && !strncasecmp(k->line, "QUIT", 4)) {
					memcpy(out + o, "221 bye\r\n", 9), o += 9;
					quit = 1;
					quits++;
				} else {
					memcpy(out + o, "250 ok\r\n", 8), o += 8;
				}
				k->linelen = 0;
				if (quit)
					break;
			}
			if (o > 0 && write(fd, out, o) != o)
				quit = 1;
			if (quit)
				drop(ep, fd);
		}
	}
	printf("floor-sink: %ld messages, %.1f us of CPU a message\n", msgs, msgs ? (cpu() - start) / msgs * 1e6 : 0);
	return 0;
}
