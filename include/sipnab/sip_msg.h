#ifndef SIPNAB_SIP_MSG_H
#define SIPNAB_SIP_MSG_H
#endif
