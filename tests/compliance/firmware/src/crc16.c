/* SPDX-License-Identifier: Apache-2.0 */
#include "crc16.h"

uint16_t fw_crc16(const uint8_t *data, size_t size)
{
    uint16_t crc = 0xFFFFU;
    for (size_t i = 0U; i < size; ++i) {
        crc ^= (uint16_t)((uint16_t)data[i] << 8U);
        for (uint8_t bit = 0U; bit < 8U; ++bit) {
            if ((crc & 0x8000U) != 0U) {
                crc = (uint16_t)((uint16_t)(crc << 1U) ^ 0x1021U);
            } else {
                crc = (uint16_t)(crc << 1U);
            }
        }
    }
    return crc;
}
