/* SPDX-License-Identifier: Apache-2.0 */
/* The control interface of the fault layer (libclzero_fault_layer.so). The
 * ICD loader loads the layer from OPENCL_LAYERS; tests reach these functions
 * with dlopen(RTLD_NOLOAD) + dlsym, programs without code changes through the
 * environment variables below.
 *
 *   CLZERO_FAULT=<call>:<nth>:<code>[:async]  fail the nth occurrence of
 *       <call> ("*" for any intercepted call) with <code> (a name such as
 *       CL_MAP_FAILURE, or a number).
 *   CLZERO_FAULT_SHADOW_MAPS=1  every map of a buffer that is not
 *       CL_MEM_USE_HOST_PTR returns a fresh host pointer (a shadow copy).
 *   CLZERO_FAULT_RUN_AFTER_FAILED=1  a non-blocking clEnqueueMapBuffer,
 *       clEnqueueSVMMap or clEnqueueReadBuffer whose wait list holds an
 *       event that ended in error runs after the others and completes with
 *       CL_COMPLETE (NVIDIA's driver 580 does; the spec leaves it open).
 *   CLZERO_FAULT_REPORT=1  print the counts and every violation at exit.
 *   CLZERO_FAULT_STRICT=1  exit with status 86 if a violation was recorded.
 *   CLZERO_FAULT_HAZARDS=1  run the happens-before checker (hazard.hpp): at
 *       exit print its figures and reports to stderr, write them to
 *       $CLZERO_HAZARD_REPORT if set, and exit with status 87 if it found a
 *       hazard or an unflushed cross-queue wait. */
#ifndef CLZERO_FAULT_CONTROL_H
#define CLZERO_FAULT_CONTROL_H

#ifdef __cplusplus
extern "C" {
#endif

/* How an armed fault fails its call. */
enum clzero_fault_mode {
  /* The call returns the error code (or NULL with the code in errcode_ret);
   * nothing is enqueued or allocated. */
  CLZERO_FAULT_IMMEDIATE = 0,
  /* Non-blocking enqueues: the call succeeds, but the command ends with an
   * error status (it waits on a user event the layer then fails, so the
   * implementation propagates the failure as it does for a real one).
   * Blocking calls fail immediately instead. */
  CLZERO_FAULT_ASYNC = 1
};

/* What the layer has seen since it was loaded (objects) or since the last
 * clzero_fault_reset (calls, faults, violations). Objects are counted by the
 * references the application holds (create/retain/release). */
struct clzero_fault_counts {
  long live_mem;       /* cl_mem objects the application still holds */
  long live_events;    /* cl_event objects the application still holds */
  long live_svm;       /* clSVMAlloc allocations not yet freed */
  long active_maps;    /* maps not yet unmapped (failed maps excluded) */
  long calls;          /* intercepted calls that a fault could hit */
  long faults;         /* faults injected */
  long violations;     /* protocol violations (see clzero_fault_violation) */
  long shadow_maps;    /* maps answered with a shadow pointer */
};

/* The happens-before checker's figures since the layer was loaded (hazards
 * and unflushed waits: since the last clzero_fault_hazard_clear). */
struct clzero_hazard_counts {
  int on;           /* CLZERO_FAULT_HAZARDS=1 */
  long commands;    /* commands recorded */
  long accesses;    /* memory accesses recorded */
  long pairs;       /* conflicting pairs whose order was checked */
  long hazards;     /* conflicting pairs no path orders */
  long unflushed;   /* waits on an event of a queue never flushed after it */
};

/* Forgets the call log, the armed fault and the recorded violations. */
void clzero_fault_reset(void);
/* Fails the nth (1-based) intercepted call named `call` ("*": any). */
void clzero_fault_arm(const char* call, long nth, int code, int mode);
void clzero_fault_disarm(void);
/* While paused, calls are neither counted nor failed (the test's own calls). */
void clzero_fault_pause(int paused);
void clzero_fault_shadow_maps(int on);
void clzero_fault_run_after_failed(int on);
/* Answers CL_DEVICE_VENDOR_ID with `id` (0: the device's own), so that a
 * test reaches another vendor's driver workarounds. */
void clzero_fault_vendor_id(unsigned id);
void clzero_fault_get_counts(struct clzero_fault_counts* out);
/* The name of the ith (0-based) intercepted call since the last reset, or
 * NULL past the end; the first 65536 calls are kept. */
const char* clzero_fault_call(long i);
/* The call the armed fault hit, or NULL if it has not fired. */
const char* clzero_fault_fired(void);
/* The ith violation since the last reset, or NULL past the end. */
const char* clzero_fault_violation(long i);
void clzero_fault_hazard_counts(struct clzero_hazard_counts* out);
/* The ith hazard or unflushed-wait report (the first 100 are kept), or NULL. */
const char* clzero_fault_hazard_report(long i);
/* Forgets the reports and their counts (a test that provoked them on purpose). */
void clzero_fault_hazard_clear(void);

#ifdef __cplusplus
}
#endif

#endif
