#ifndef SIPNAB_SDP_H
#define SIPNAB_SDP_H
#endif
