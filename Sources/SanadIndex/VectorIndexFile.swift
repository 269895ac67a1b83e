import Foundation
import SanadArchive

/// One vector index per file, written crash-safely and checked when read.
///
/// Layout (little-endian): a 40-byte header — `SANADVEC`, version (UInt32, 1), dimension (UInt32), entry count
/// (UInt64), payload length (UInt64), CRC-32 of the header's first 32 bytes and the payload (UInt32), zero (UInt32)
/// — then the payload: per entry its id, text and metadata (UInt32 lengths, UTF-8 bytes; metadata as a count then
/// key/value pairs), then every vector (count × dimension Float32). A save writes a temporary file beside the
/// target, syncs it, renames it over the target and syncs the folder: a killed process leaves the old file or the
/// new one, never a mix. A file that is cut short or changed (checksum) is refused with an error naming it.
public enum VectorIndexFile {
    static let magic = Array("SANADVEC".utf8)
    static let version: UInt32 = 1
    static let headerBytes = 40
    /// The widest vector a file may hold.
    static let maxDimension = 1 << 16

    /// Reads the index at `path`.
    public static func load(_ path: String) throws -> VectorIndex {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw VectorIndexError.io(path: path, operation: "read", reason: "no such file or not readable")
        }
        return try data.withUnsafeBytes { try parse($0, path: path) }
    }

    /// How long a writer waits for another one's lock before it gives up with an error.
    public static let lockWait: Double = 120

    /// Reads the index at `path` (a new empty one of `dimension` when there is no file and `dimension` is given),
    /// applies `change` and saves it, all under an exclusive lock (`flock` on `PATH.lock` beside it): a second
    /// writer waits until the first has saved, then reads what it saved, so concurrent `sanad index add` keep every
    /// entry. A writer still waiting after `lockWait` seconds fails with an error naming the lock file.
    public static func update<T>(
        _ path: String, dimension: Int? = nil, _ change: (inout VectorIndex) throws -> T
    ) throws -> T {
        try withLock(path) {
            var index: VectorIndex
            if let dimension { index = try loadOrCreate(path, dimension: dimension) } else { index = try load(path) }
            let result = try change(&index)
            try save(index, to: path)
            return result
        }
    }

    /// Runs `body` holding the exclusive lock of the index at `path` (the lock file is created when missing; it
    /// holds nothing and may be deleted when no writer runs).
    public static func withLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let lockPath = path + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw VectorIndexError.io(
                path: lockPath, operation: "open the lock file", reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        let deadline = Date().addingTimeInterval(lockWait)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw VectorIndexError.io(path: lockPath, operation: "lock", reason: String(cString: strerror(errno)))
            }
            guard Date() < deadline else {
                throw VectorIndexError.io(
                    path: lockPath, operation: "lock",
                    reason: "another writer has held it for \(Int(lockWait)) s; wait for it to finish (or, if no "
                        + "sanad runs, delete the lock file)")
            }
            usleep(20_000)
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// Reads the index at `path`, or a new empty one of `dimension` when there is no file.
    public static func loadOrCreate(_ path: String, dimension: Int) throws -> VectorIndex {
        FileManager.default.fileExists(atPath: path) ? try load(path) : VectorIndex(dimension: dimension)
    }

    static func parse(_ bytes: UnsafeRawBufferPointer, path: String) throws -> VectorIndex {
        func corrupt(_ what: String) -> VectorIndexError { .corrupt(path: path, what: what) }
        guard bytes.count >= headerBytes else { throw corrupt("\(bytes.count) bytes, shorter than the header") }
        guard Array(bytes[0..<8]) == magic else { throw corrupt("it does not start with SANADVEC") }
        func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        guard u32(8) == version else { throw corrupt("format version \(u32(8)); this Sanad reads version 1") }
        let dimension = Int(u32(12))
        guard (1...maxDimension).contains(dimension) else { throw corrupt("dimension \(dimension)") }
        guard u64(24) == UInt64(bytes.count - headerBytes) else {
            throw corrupt("the header promises \(u64(24)) payload bytes but the file has \(bytes.count - headerBytes)")
        }
        var crc = CRC32()
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[0..<32]))
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[headerBytes...]))
        guard crc.checksum == u32(32) else { throw corrupt("checksum mismatch") }
        let count64 = u64(16)
        // Each entry takes at least 12 bytes of records and 4·dimension of vector.
        guard count64 <= UInt64(bytes.count / (12 + 4 * dimension)) else { throw corrupt("entry count \(count64)") }
        let count = Int(count64)
        var at = headerBytes
        func take(_ n: Int) throws -> UnsafeRawBufferPointer {
            guard n >= 0, n <= bytes.count - at else { throw corrupt("an entry runs past the end") }
            defer { at += n }
            return UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)])
        }
        func string() throws -> String {
            let n = Int(try take(4).loadUnaligned(as: UInt32.self).littleEndian)
            guard let s = String(validating: try take(n), as: UTF8.self) else {
                throw corrupt("text that is not UTF-8")
            }
            return s
        }
        var entries: [VectorIndexEntry] = []
        entries.reserveCapacity(count)
        var ids = Set<String>()
        for _ in 0..<count {
            let id = try string()
            let text = try string()
            let pairs = Int(try take(4).loadUnaligned(as: UInt32.self).littleEndian)
            guard pairs <= (bytes.count - at) / 8 else { throw corrupt("a metadata count runs past the end") }
            var metadata: [String: String] = [:]
            for _ in 0..<pairs {
                let key = try string()
                metadata[key] = try string()
            }
            guard ids.insert(id).inserted else { throw corrupt("the id '\(id)' appears twice") }
            entries.append(VectorIndexEntry(id: id, text: text, metadata: metadata))
        }
        let vectorBytes = try take(count * dimension * 4)
        guard at == bytes.count else { throw corrupt("\(bytes.count - at) bytes after the vectors") }
        let vectors = [Float](unsafeUninitializedCapacity: count * dimension) { out, done in
            if let base = out.baseAddress, let source = vectorBytes.baseAddress {
                memcpy(base, source, count * dimension * 4)
            }
            done = count * dimension
        }
        guard vectors.allSatisfy(\.isFinite) else { throw corrupt("a vector with a NaN or infinity") }
        return VectorIndex(dimension: dimension, entries: entries, vectors: vectors)
    }

    /// The file's bytes for `index`.
    static func encode(_ index: VectorIndex) -> [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(index.vectors.count * 4 + index.count * 64)
        func append(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { payload.append(contentsOf: $0) } }
        func append(_ s: String) {
            append(UInt32(s.utf8.count))
            payload.append(contentsOf: s.utf8)
        }
        for e in index.entries {
            append(e.id)
            append(e.text)
            append(UInt32(e.metadata.count))
            for key in e.metadata.keys.sorted() {
                append(key)
                append(e.metadata[key] ?? "")
            }
        }
        index.vectors.withUnsafeBytes { payload.append(contentsOf: $0) }
        var header: [UInt8] = magic
        func put32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { header.append(contentsOf: $0) } }
        func put64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { header.append(contentsOf: $0) } }
        put32(version)
        put32(UInt32(index.dimension))
        put64(UInt64(index.count))
        put64(UInt64(payload.count))
        var crc = CRC32()
        header.withUnsafeBytes { crc.update($0) }
        payload.withUnsafeBytes { crc.update($0) }
        put32(crc.checksum)
        put32(0)
        return header + payload
    }

    /// Writes `index` to `path` crash-safely (temporary file, fsync, rename, fsync of the folder).
    public static func save(_ index: VectorIndex, to path: String) throws {
        let bytes = encode(index)
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let temporary = folder + "/." + url.lastPathComponent + ".tmp-\(getpid())"
        func fail(_ operation: String, _ target: String = path) -> VectorIndexError {
            .io(path: target, operation: operation, reason: String(cString: strerror(errno)))
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw fail("create", temporary) }
        var written = 0
        let ok = bytes.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let n = write(fd, raw.baseAddress.unsafelyUnwrapped + written, raw.count - written)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                written += n
            }
            return true
        }
        guard ok, fsync(fd) == 0 else {
            let error = fail("write", temporary)
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = fail("rename \(temporary) over")
            unlink(temporary)
            throw error
        }
        let dir = open(folder, O_RDONLY)
        if dir >= 0 {
            fsync(dir)
            close(dir)
        }
    }
}
