#include "status.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <new>
#include <system_error>

namespace holdfast::check {

SharedStatus::SharedStatus(const std::string& path, bool create) {
    const int fd = ::open(path.c_str(), create ? O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC : O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot open status file " + path);
    if (create && ::ftruncate(fd, sizeof(StatusPage)) != 0) {
        const int error = errno;
        ::close(fd);
        throw std::system_error(error, std::generic_category(), "cannot size status file " + path);
    }
    void* memory = ::mmap(nullptr, sizeof(StatusPage), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int error = errno;
    ::close(fd);
    if (memory == MAP_FAILED) throw std::system_error(error, std::generic_category(), "cannot map status file " + path);
    page_ = create ? new (memory) StatusPage() : static_cast<StatusPage*>(memory);
}

SharedStatus::~SharedStatus() { ::munmap(page_, sizeof(StatusPage)); }

}  // namespace holdfast::check
