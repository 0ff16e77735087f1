/*
 * What libucs needs from libucm beyond the public API: the mask of events
 * that have a handler, so that the interposed functions (in libucs) skip
 * all work while no one listens. Not installed.
 */
#ifndef UCM_EVENT_EVENT_H_
#define UCM_EVENT_EVENT_H_

#include <ucm/api/ucm.h>

BEGIN_C_DECLS

/* UCM_EVENT_VM_MAPPED / UCM_EVENT_VM_UNMAPPED bits of the events that have
 * a handler or that a running check waits for; read with
 * ucm_event_is_listened() */
extern int ucm_event_listened;

static inline int ucm_event_is_listened(int event)
{
    return __atomic_load_n(&ucm_event_listened, __ATOMIC_ACQUIRE) & event;
}

END_C_DECLS

#endif
