#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening a file that must be a regular file (a model, a library) without ever blocking on a special one.
///
/// `open` on a FIFO blocks until a writer appears, and reading a character device may never end; `open` with
/// `O_NONBLOCK` returns at once for both, and `fstat` on the descriptor then tells what it is. Engines call
/// `RegularFile.problem(path:)` before handing a path to `dlopen` or to a native library.
public enum RegularFile {
    /// Opens `path` read-only, refusing anything but a regular file. Returns the descriptor (blocking mode restored)
    /// and the file size, or a reason worded for a message (`not a regular file (a FIFO)`).
    public static func open(path: String) -> Result<(descriptor: Int32, size: Int), RegularFileProblem> {
        let fd = systemOpen(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return .failure(RegularFileProblem(reason: String(cString: strerror(errno)))) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            return .failure(RegularFileProblem(reason: reason))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return .failure(RegularFileProblem(reason: "not a regular file (\(kind(of: info.st_mode)))"))
        }
        // Regular files never block; clear O_NONBLOCK so that later reads behave as usual.
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return .success((fd, Int(info.st_size)))
    }

    /// Nil when `path` is a regular file that can be opened for reading, else why not (for an error message).
    public static func problem(path: String) -> String? {
        switch open(path: path) {
        case .success(let opened):
            close(opened.descriptor)
            return nil
        case .failure(let problem):
            return problem.reason
        }
    }

    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a directory"
        case S_IFSOCK: return "a socket"
        default: return "a special file"
        }
    }
}

/// Why a path could not be opened as a regular file.
public struct RegularFileProblem: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

/// The C library's `open` (the name `open` is taken by `RegularFile.open` inside the enum).
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    #if canImport(Darwin)
        return Darwin.open(path, flags)
    #elseif canImport(Musl)
        return Musl.open(path, flags)
    #else
        return Glibc.open(path, flags)
    #endif
}
