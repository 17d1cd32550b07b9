#include "xlite/version.h"

namespace xlite {

const char* version() { return XLITE_VERSION_STRING; }

}  // namespace xlite
