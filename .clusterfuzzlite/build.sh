#!/bin/bash -eu
# ClusterFuzzLite's build step: the project's own OSS-Fuzz style script (fuzz/build-ossfuzz.sh),
# which reads CC, CXX, CFLAGS, CXXFLAGS, LIB_FUZZING_ENGINE and OUT from the environment.
exec "$SRC/poolspec/fuzz/build-ossfuzz.sh"
