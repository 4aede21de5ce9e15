#ifndef PD_TIMER_H
#define PD_TIMER_H

/* Monotonic wall clock in seconds. */
double pd_now(void);

#endif
