#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/type/thread_mode.h>

#include <stddef.h>

const char *ucs_thread_mode_names[] = {[UCS_THREAD_MODE_SINGLE] = "single",
                                       [UCS_THREAD_MODE_SERIALIZED] =
                                           "serialized",
                                       [UCS_THREAD_MODE_MULTI] = "multi",
                                       [UCS_THREAD_MODE_LAST]  = NULL};
