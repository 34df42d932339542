// The in-process engine's coverage sites (src/coverage/traps.h), for src/coverage/traps.rs.

#include "traps.h"

extern "C" {

// Arm `N` sorted sites with their flags (CTOS_MAY_PATCH, CTOS_FOLLOWS); null, or why not
// (a static string, valid until the next call).
const char *ctos_traps_arm(const uint64_t *Addrs, const uint8_t *Flags, size_t N) {
  static std::string Why;
  Why = ctos_traps::arm(Addrs, Flags, N);
  return Why.empty() ? nullptr : Why.c_str();
}

void ctos_traps_disarm() { ctos_traps::disarm(); }

void ctos_traps_rearm() { ctos_traps::rearm(); }

void ctos_traps_enter_child(uint8_t *Record, const volatile uint8_t *Phase, uint8_t Optimizing,
                            const volatile int *Gate) {
  ctos_traps::enterChild(Record, Phase, Optimizing, Gate);
}

size_t ctos_traps_patched() { return ctos_traps::patched(); }
}
