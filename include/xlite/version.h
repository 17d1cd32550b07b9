#pragma once
// xlite's version (semantic versioning). CMakeLists.txt's project version must equal it (checked when
// configuring).
#define XLITE_VERSION_MAJOR 0
#define XLITE_VERSION_MINOR 1
#define XLITE_VERSION_PATCH 0
#define XLITE_VERSION_STRING "0.1.0"

namespace xlite {
// The version of the library linked in, which may differ from the header a program was compiled against.
const char* version();
}  // namespace xlite
