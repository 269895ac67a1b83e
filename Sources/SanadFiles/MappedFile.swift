#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a file could not be mapped; each reader (GGUF, safetensors, the ELF checks) words it for its own format.
public enum MappedFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Missing, unreadable, not a regular file (a FIFO, a folder), or mmap failed: the reason in words.
    case cannotOpen(path: String, reason: String)
    /// The file is empty (a zero-length mapping is impossible).
    case empty(path: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): return "cannot open \(path): \(reason)"
        case .empty(let path): return "\(path) is empty"
        }
    }
}

/// A read-only memory mapping of a whole file. The bytes stay valid for the lifetime of the object; engines keep
/// a reference so weights are read straight from the page cache, never copied.
public final class MappedFile: @unchecked Sendable {  // @unchecked: a read-only mapping, unmapped once in deinit
    public let path: String
    public let base: UnsafeRawPointer
    public let count: Int

    public init(path: String) throws {
        self.path = path
        // O_NONBLOCK + fstat: a FIFO or a device named as a model is refused at once instead of blocking.
        let fd: Int32
        let size: Int
        switch RegularFile.open(path: path) {
        case .success(let opened): (fd, size) = opened
        case .failure(let problem): throw MappedFileError.cannotOpen(path: path, reason: problem.reason)
        }
        defer { close(fd) }
        guard size > 0 else { throw MappedFileError.empty(path: path) }
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else {
            throw MappedFileError.cannotOpen(path: path, reason: "mmap failed: " + String(cString: strerror(errno)))
        }
        self.base = UnsafeRawPointer(mapped)
        self.count = size
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), count)
    }

    /// Tells the kernel that the whole pages within `start ..< start + byteCount` of the mapping will not be read
    /// again for a while, so they leave this process's resident memory (the page cache keeps them; a later read
    /// maps them back). For data an engine has copied into another form.
    public func release(_ start: UnsafeRawPointer, byteCount: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let from = (Int(bitPattern: start) + page - 1) / page * page
        let to = (Int(bitPattern: start) + byteCount) / page * page
        guard to > from, Int(bitPattern: base) <= from, to <= Int(bitPattern: base) + count else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: from), to - from, MADV_DONTNEED)
    }

    /// The mapped bytes as a buffer.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}
