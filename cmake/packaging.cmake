# Debian package of what `cmake --install` installs: cpack -G DEB in the
# build directory writes papshim_<version>_<arch>.deb (tests/install checks it).
#
# Depends lists the Debian packages of the libraries libpapshim.so is linked
# against (readelf -d: NEEDED; dpkg -S: owner), as on Debian 12; the test
# checks every NEEDED library's owner is listed.
#
# Neither `make install` nor cpack builds every target first (the tests and
# benchmarks are not installed, and build for minutes): build the installed
# ones, then install or package:
#   cmake --build build --target papshim papshim_stub papshim-info && (cd build && cpack)
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME papshim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "papshim")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "arrival-aware MPI collectives for unmodified programs (LD_PRELOAD)")
set(CPACK_PACKAGE_DESCRIPTION
  "papshim intercepts MPI_Reduce, MPI_Allreduce and MPI_Allgather through the \
PMPI interface, predicts when every rank arrives at each call site and runs \
an algorithm suited to the arrival pattern. Use: papshim -- mpirun -np 8 ./app. \
Contains libpapshim.so (the preload), libpapshim_stub.so and papshim.h \
(papshim_edge), papshim-info, the papshim launcher and the CMake package files.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "papshim maintainers <papshim@users.noreply.github.com>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)

if(PAPSHIM_OPEN_MPI)
  set(PAPSHIM_DEB_MPI "libopenmpi3")
  set(PAPSHIM_DEB_LAUNCHER "openmpi-bin")
else()
  set(PAPSHIM_DEB_MPI "libmpich12")
  set(PAPSHIM_DEB_LAUNCHER "mpich")
endif()
# Debian names these after the soname: libspdlog1.10, libfmt9.
set(PAPSHIM_DEB_SPDLOG "libspdlog${spdlog_VERSION_MAJOR}.${spdlog_VERSION_MINOR}")
if(DEFINED fmt_VERSION_MAJOR)
  set(PAPSHIM_DEB_FMT ", libfmt${fmt_VERSION_MAJOR}")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libc6, libgcc-s1, libstdc++6, ${PAPSHIM_DEB_MPI}, ${PAPSHIM_DEB_SPDLOG}${PAPSHIM_DEB_FMT}, libunwind8, libdw1, libelf1")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "${PAPSHIM_DEB_LAUNCHER}")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client")
include(CPack)
