/* Declaration-only stand-in for the platform information of CANN's host tiling API
 * (`tiling/platform/platform_ascendc.h`), the subset hpmoe's host launcher calls. Syntax checks only. */
#ifndef HPMOE_DECL_PLATFORM_ASCENDC_H
#define HPMOE_DECL_PLATFORM_ASCENDC_H

#include <cstdint>

namespace platform_ascendc {
/* The SoC a tiling is computed for (core counts, buffer sizes). */
class PlatformAscendC {
public:
    uint32_t GetCoreNumAic() const;
    uint32_t GetCoreNumAiv() const;
};
/* The platform of the device in use (or of a named SoC version). */
class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance();
    static PlatformAscendC* GetInstance(const char* customSocVersion);
};
}  // namespace platform_ascendc

#endif /* HPMOE_DECL_PLATFORM_ASCENDC_H */
