// floor-client: the least an open-loop echo client can do on Linux, as a
// floor for tcpperf's own CPU per message (docs/tcpperf.md). It opens N
// connections to PORT on 127.0.0.1, sends RATE 64-byte messages a second
// over all of them in turn for SECONDS, and reads what comes back: one
// write(2) a message, one read(2) per ready connection, one epoll_pwait2
// per wake-up, which it takes 400 µs after the next send is due (as
// tcpperf's -wait batch). No round trip is timed. It prints its CPU
// (user + system, getrusage) per message sent, and its send lateness
// (from when a message was due to the wake-up that wrote it, as tcpperf
// counts it): how late even this client sends on the host.
//
//	cc -O2 -o floor-client docs/floor-client.c
//	./floor-client PORT N RATE SECONDS
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int before(const void *a, const void *b) {
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

static double cpu(void) {
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv) {
	if (argc != 5) {
		fprintf(stderr, "usage: floor-client PORT N RATE SECONDS\n");
		return 2;
	}
	int port = atoi(argv[1]), n = atoi(argv[2]);
	double rate = atof(argv[3]), seconds = atof(argv[4]);
	int *fds = calloc(n, sizeof *fds);
	int ep = epoll_create1(0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	for (int i = 0; i < n; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
			perror("connect");
			return 1;
		}
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		fcntl(s, F_SETFL, O_NONBLOCK);
		struct epoll_event e = {.events = EPOLLIN, .data.u32 = i};
		epoll_ctl(ep, EPOLL_CTL_ADD, s, &e);
		fds[i] = s;
	}
	char msg[64], buf[4096];
	memset(msg, 'x', sizeof msg - 1);
	msg[sizeof msg - 1] = '\n';
	struct epoll_event evs[256];
	long sent = 0, received = 0, nlate = 0, maxlate = (long)(rate * seconds) + 1;
	float *late = malloc(maxlate * sizeof *late);
	int next = 0;
	double start = now(), due = start, interval = 1 / rate, cpu0 = cpu();
	while (now() - start < seconds) {
		for (double t = now(); due <= t; due += interval) {
			if (write(fds[next], msg, sizeof msg) == sizeof msg)
				sent++;
			if (nlate < maxlate)
				late[nlate++] = t - due;
			next = (next + 1) % n;
		}
		double wait = due - now() + 400e-6;
		if (wait < 0)
			wait = 0;
		struct timespec ts = {.tv_sec = (time_t)wait, .tv_nsec = (long)((wait - (time_t)wait) * 1e9)};
		int k = epoll_pwait2(ep, evs, 256, &ts, NULL);
		for (int j = 0; j < k; j++) {
			ssize_t m = read(fds[evs[j].data.u32], buf, sizeof buf);
			if (m > 0)
				received += m / sizeof msg;
		}
	}
	double used = cpu() - cpu0;
	printf("sent %ld received %ld: %.2f µs of CPU a message (%.0f%% of one core)\n", sent, received, used / sent * 1e6,
	       used / seconds * 100);
	if (nlate > 0) {
		qsort(late, nlate, sizeof *late, before);
		printf("send lateness p50 %.0f µs, p99 %.0f µs, max %.0f µs\n", late[nlate / 2] * 1e6,
		       late[nlate * 99 / 100] * 1e6, late[nlate - 1] * 1e6);
	}
	return 0;
}
