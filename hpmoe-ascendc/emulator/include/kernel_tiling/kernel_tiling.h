/* hpmoe AscendC emulator: `kernel_tiling/kernel_tiling.h`. The struct is data, not behaviour: the
 * emulator uses the very definition of hpmoe's declaration header, so a tiling written for one is
 * read the same by the other. The emulator reads M/N/Ka/Kb, singleCore*, base*, depth* and dbL0*
 * (src/matmul.cpp). */
#ifndef HPMOE_EMU_KERNEL_TILING_H
#define HPMOE_EMU_KERNEL_TILING_H

#include "../../../devkit-decl/kernel_tiling/kernel_tiling.h"

#endif /* HPMOE_EMU_KERNEL_TILING_H */
