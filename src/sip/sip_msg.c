#include "config.h"
/* placeholder until the module lands */
typedef int sn_placeholder_unused_fn(void);
