/* The native worker's way out when an allocation it cannot do without fails (defined in ipc.c):
 * a 'fatal' line to the pod process, a line on stderr, exit status 3. */
#ifndef ATTESTORM_FATAL_H
#define ATTESTORM_FATAL_H

__attribute__((noreturn)) void native_out_of_memory(const char *what);

#endif
