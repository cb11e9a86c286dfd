/* SPDX-License-Identifier: Apache-2.0 */
/* CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF), in C: the
   kind of helper a firmware keeps in C, declared for C and C++. */
#ifndef FW_CRC16_H
#define FW_CRC16_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
extern "C" {
#else
#include <stddef.h>
#include <stdint.h>
#endif

uint16_t fw_crc16(const uint8_t *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* FW_CRC16_H */
