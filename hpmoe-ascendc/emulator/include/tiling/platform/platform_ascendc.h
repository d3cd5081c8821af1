/* hpmoe AscendC emulator: the platform information of CANN's host tiling API
 * (`tiling/platform/platform_ascendc.h`), the subset a launcher uses: the SoC the emulator
 * stands for (dav-2201: 24 AIC and 48 AIV per die; the launch uses fewer). */
#ifndef HPMOE_EMU_PLATFORM_ASCENDC_H
#define HPMOE_EMU_PLATFORM_ASCENDC_H

#include <cstdint>

namespace platform_ascendc {

/* The SoC a tiling is computed for. */
class PlatformAscendC {
public:
    uint32_t GetCoreNumAic() const { return 24; }
    uint32_t GetCoreNumAiv() const { return 48; }
};

/* The platform of the device in use (or of a named SoC version: the emulator knows one). */
class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance() {
        static PlatformAscendC platform;
        return &platform;
    }
    static PlatformAscendC* GetInstance(const char*) { return GetInstance(); }
};

}  // namespace platform_ascendc

#endif /* HPMOE_EMU_PLATFORM_ASCENDC_H */
