import Foundation
import SanadArchive

/// One vector index per file: checksummed, created and compacted crash-safely, grown by appends.
///
/// Format 2 (little-endian): a header — `SANADVEC`, version (UInt32, 2), dimension (UInt32), the length of the
/// model record (UInt32), CRC-32 of those 20 bytes and the model record (UInt32), then the model record (the
/// embedding model's id and weights digest, each a UInt32 length and UTF-8 bytes; both empty for no model) — then
/// segments. A segment is `SEG2`, its entry count (UInt32), payload length (UInt64), CRC-32 of the count, the length
/// and the payload (UInt32), then the payload: per entry its id, text and metadata (UInt32 lengths, UTF-8 bytes;
/// metadata as a count then key/value pairs), then every vector (count × dimension Float32, unit length). Later
/// segments add entries; an id seen again replaces the earlier entry.
///
/// Writes: a new file, a removal and a compaction write the whole index to a temporary file beside the target,
/// sync it, rename it over the target and sync the folder (a killed process leaves the old file or the new one).
/// An add appends one segment and syncs: a killed append leaves a cut-short last segment, which a read leaves out
/// (the previous index is intact and checksummed) and the next write cuts off. A file that is cut short or changed
/// anywhere else (header, first segment, checksum) is refused with an error naming it. Format 1 files (one block,
/// no model) are read, and rewritten in format 2 by the next write.
public enum VectorIndexFile {
    static let magic = Array("SANADVEC".utf8)
    static let segmentMagic = Array("SEG2".utf8)
    static let version: UInt32 = 2
    static let segmentHeaderBytes = 20
    /// The widest vector a file may hold.
    static let maxDimension = 1 << 16

    /// A read file: the index, where its last complete segment ends, the bytes of an interrupted append after it,
    /// how many stored entries later segments replaced, and the format version.
    struct Contents {
        var index: VectorIndex
        var validLength: Int
        var tornBytes: Int
        var replaced: Int
        var version: UInt32
    }

    /// Reads the index at `path` (an interrupted last append is left out).
    public static func load(_ path: String) throws -> VectorIndex { try read(path).index }

    static func read(_ path: String) throws -> Contents {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw VectorIndexError.io(path: path, operation: "read", reason: "no such file or not readable")
        }
        return try data.withUnsafeBytes { try parse($0, path: path) }
    }

    /// Adds `entries` (vectors of `model`, of length `dimension`) to the index at `path`, creating it when there is
    /// none, under the index's lock; returns the entry count. Appends one segment, unless the file is format 1 or
    /// replaced entries outnumber the live ones (then the index is rewritten whole). An index of another model or
    /// dimension is refused, naming both; nothing is written then.
    public static func append(
        _ path: String, dimension: Int, model: IndexModel?, entries: [(entry: VectorIndexEntry, vector: [Float])]
    ) throws -> Int {
        try withLock(path) {
            guard FileManager.default.fileExists(atPath: path) else {
                var index = VectorIndex(dimension: dimension, model: model)
                for (entry, vector) in entries { try index.add(entry, vector: vector, file: path) }
                try save(index, to: path)
                return index.count
            }
            var contents = try read(path)
            try check(contents.index, path: path, dimension: dimension, model: model)
            var added = VectorIndex(dimension: dimension, model: model)
            for (entry, vector) in entries {
                try added.add(entry, vector: vector, file: path)
                if contents.index.store(entry, unit: added.vectors.suffix(dimension)) { contents.replaced += 1 }
            }
            if contents.version != version || contents.replaced > contents.index.count {
                if contents.index.model == nil { contents.index.model = model }
                try save(contents.index, to: path)
            } else {
                try appendSegment(segment(added), to: path, at: contents.validLength)
            }
            return contents.index.count
        }
    }

    /// Refuses vectors of another dimension or model than the index's: models are the same when their weights
    /// digests are (a renamed copy is the same model); an index without a model takes any of its dimension.
    public static func check(_ index: VectorIndex, path: String, dimension: Int, model: IndexModel?) throws {
        guard index.dimension == dimension else {
            throw VectorIndexError.dimensionMismatch(path: path, expected: index.dimension, found: dimension)
        }
        if let recorded = index.model, let model, recorded.digest != model.digest {
            throw VectorIndexError.modelMismatch(path: path, index: recorded.description, given: model.description)
        }
    }

    /// How long a writer waits for another one's lock before it gives up with an error.
    public static let lockWait: Double = 120

    /// Reads the index at `path` (a new empty one of `dimension` when there is no file and `dimension` is given),
    /// applies `change` and saves it whole (a removal, a compaction), all under an exclusive lock (`flock` on `PATH.lock` beside it): a second
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

    static func parse(_ bytes: UnsafeRawBufferPointer, path: String) throws -> Contents {
        var reader = ByteReader(bytes: bytes, path: path)
        guard bytes.count >= 20 else { throw reader.corrupt("\(bytes.count) bytes, shorter than the header") }
        guard Array(bytes[0..<8]) == magic else { throw reader.corrupt("it does not start with SANADVEC") }
        let fileVersion = reader.u32(at: 8)
        let dimension = Int(reader.u32(at: 12))
        guard fileVersion == 1 || fileVersion == version else {
            throw reader.corrupt("format version \(fileVersion); this Sanad reads versions 1 and 2")
        }
        guard (1...maxDimension).contains(dimension) else { throw reader.corrupt("dimension \(dimension)") }
        if fileVersion == 1 { return try parseVersion1(&reader, dimension: dimension) }
        let modelBytes = Int(reader.u32(at: 16))
        guard modelBytes <= bytes.count - 24 else { throw reader.corrupt("the model record runs past the end") }
        var crc = CRC32()
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[0..<20]))
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[24..<(24 + modelBytes)]))
        guard crc.checksum == reader.u32(at: 20) else { throw reader.corrupt("header checksum mismatch") }
        reader.at = 24
        let id = try reader.string()
        let digest = try reader.string()
        guard reader.at == 24 + modelBytes else { throw reader.corrupt("a model record of the wrong length") }
        var index = VectorIndex(
            dimension: dimension, model: id.isEmpty && digest.isEmpty ? nil : IndexModel(id: id, digest: digest))
        var replaced = 0
        var segments = 0
        while reader.at < bytes.count {
            let start = reader.at
            // A last segment that is cut short or fails its checksum is an interrupted append: left out. The first
            // one is written with the header (temporary file and rename), so it cannot be torn: it is damage.
            guard let segment = try reader.segment(dimension: dimension, last: segments > 0) else {
                return Contents(
                    index: index, validLength: start, tornBytes: bytes.count - start, replaced: replaced,
                    version: version)
            }
            for (i, entry) in segment.entries.enumerated() {
                if index.store(entry, unit: segment.vectors[(i * dimension)..<((i + 1) * dimension)]) { replaced += 1 }
            }
            segments += 1
        }
        guard segments > 0 else { throw reader.corrupt("no segment after the header") }
        return Contents(index: index, validLength: bytes.count, tornBytes: 0, replaced: replaced, version: version)
    }

    /// Format 1: a 40-byte header (`SANADVEC`, 1, dimension, count, payload length, CRC-32, zero), one payload.
    static func parseVersion1(_ reader: inout ByteReader, dimension: Int) throws -> Contents {
        let bytes = reader.bytes
        guard bytes.count >= 40 else { throw reader.corrupt("\(bytes.count) bytes, shorter than the header") }
        guard reader.u64(at: 24) == UInt64(bytes.count - 40) else {
            throw reader.corrupt(
                "the header promises \(reader.u64(at: 24)) payload bytes but the file has \(bytes.count - 40)")
        }
        var crc = CRC32()
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[0..<32]))
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[40...]))
        guard crc.checksum == reader.u32(at: 32) else { throw reader.corrupt("checksum mismatch") }
        reader.at = 40
        let (entries, vectors) = try reader.payload(count: reader.u64(at: 16), dimension: dimension, end: bytes.count)
        var index = VectorIndex(dimension: dimension)
        for (i, entry) in entries.enumerated() {
            guard !index.store(entry, unit: vectors[(i * dimension)..<((i + 1) * dimension)]) else {
                throw reader.corrupt("the id '\(entry.id)' appears twice")
            }
        }
        return Contents(index: index, validLength: bytes.count, tornBytes: 0, replaced: 0, version: 1)
    }

    /// The bytes of a format-2 file holding `index` in one segment.
    static func encode(_ index: VectorIndex) -> [UInt8] {
        var record = ByteWriter()
        record.string(index.model?.id ?? "")
        record.string(index.model?.digest ?? "")
        var header = ByteWriter()
        header.bytes += magic
        header.u32(version)
        header.u32(UInt32(index.dimension))
        header.u32(UInt32(record.bytes.count))
        var crc = CRC32()
        header.bytes.withUnsafeBytes { crc.update($0) }
        record.bytes.withUnsafeBytes { crc.update($0) }
        header.u32(crc.checksum)
        return header.bytes + record.bytes + segment(index)
    }

    /// One segment holding every entry of `index`.
    static func segment(_ index: VectorIndex) -> [UInt8] {
        var payload = ByteWriter()
        payload.bytes.reserveCapacity(index.vectors.count * 4 + index.count * 64)
        for e in index.entries {
            payload.string(e.id)
            payload.string(e.text)
            payload.u32(UInt32(e.metadata.count))
            for key in e.metadata.keys.sorted() {
                payload.string(key)
                payload.string(e.metadata[key] ?? "")
            }
        }
        index.vectors.withUnsafeBytes { payload.bytes.append(contentsOf: $0) }
        var counts = ByteWriter()
        counts.u32(UInt32(index.count))
        counts.u64(UInt64(payload.bytes.count))
        var crc = CRC32()
        counts.bytes.withUnsafeBytes { crc.update($0) }
        payload.bytes.withUnsafeBytes { crc.update($0) }
        var out = ByteWriter()
        out.bytes = segmentMagic + counts.bytes
        out.u32(crc.checksum)
        return out.bytes + payload.bytes
    }

    /// Writes `segment` at `offset` of the file at `path` (cutting off an interrupted append after it) and syncs.
    static func appendSegment(_ segment: [UInt8], to path: String, at offset: Int) throws {
        func fail(_ operation: String) -> VectorIndexError {
            .io(path: path, operation: operation, reason: String(cString: strerror(errno)))
        }
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw fail("open for appending") }
        defer { close(fd) }
        guard ftruncate(fd, off_t(offset)) == 0, lseek(fd, off_t(offset), SEEK_SET) == off_t(offset) else {
            throw fail("cut off an interrupted append")
        }
        guard writeAll(fd, segment), fsync(fd) == 0 else { throw fail("append") }
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
        guard writeAll(fd, bytes), fsync(fd) == 0 else {
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

/// Writes all of `bytes` to `fd` (retrying short writes and EINTR); false on an error (errno says which).
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { raw -> Bool in
        var written = 0
        while written < raw.count {
            let n = write(fd, raw.baseAddress.unsafelyUnwrapped + written, raw.count - written)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            written += n
        }
        return true
    }
}

/// Little-endian fields into bytes.
struct ByteWriter {
    var bytes: [UInt8] = []
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func string(_ s: String) {
        u32(UInt32(s.utf8.count))
        bytes.append(contentsOf: s.utf8)
    }
}

/// Little-endian fields out of an index file's bytes, every read bounds-checked; errors name the file.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    let path: String
    var at = 0

    func corrupt(_ what: String) -> VectorIndexError { .corrupt(path: path, what: what) }
    func u32(at offset: Int) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    func u64(at offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func take(_ n: Int, end: Int? = nil) throws -> UnsafeRawBufferPointer {
        guard n >= 0, n <= (end ?? bytes.count) - at else { throw corrupt("an entry runs past the end") }
        defer { at += n }
        return UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)])
    }

    mutating func string(end: Int? = nil) throws -> String {
        let n = Int(try take(4, end: end).loadUnaligned(as: UInt32.self).littleEndian)
        guard let s = String(validating: try take(n, end: end), as: UTF8.self) else {
            throw corrupt("text that is not UTF-8")
        }
        return s
    }

    /// `count` entries and their vectors, ending exactly at `end`.
    mutating func payload(count: UInt64, dimension: Int, end: Int) throws -> ([VectorIndexEntry], [Float]) {
        // Each entry takes at least 12 bytes of records and 4·dimension of vector.
        guard count <= UInt64((end - at) / (12 + 4 * dimension)) else { throw corrupt("entry count \(count)") }
        var entries: [VectorIndexEntry] = []
        entries.reserveCapacity(Int(count))
        for _ in 0..<Int(count) {
            let id = try string(end: end)
            let text = try string(end: end)
            let pairs = Int(try take(4, end: end).loadUnaligned(as: UInt32.self).littleEndian)
            guard pairs <= (end - at) / 8 else { throw corrupt("a metadata count runs past the end") }
            var metadata: [String: String] = [:]
            for _ in 0..<pairs {
                let key = try string(end: end)
                metadata[key] = try string(end: end)
            }
            entries.append(VectorIndexEntry(id: id, text: text, metadata: metadata))
        }
        let values = entries.count * dimension
        let vectorBytes = try take(values * 4, end: end)
        guard at == end else { throw corrupt("\(end - at) bytes after the vectors") }
        let vectors = [Float](unsafeUninitializedCapacity: values) { out, done in
            if let base = out.baseAddress, let source = vectorBytes.baseAddress { memcpy(base, source, values * 4) }
            done = values
        }
        guard vectors.allSatisfy(\.isFinite) else { throw corrupt("a vector with a NaN or infinity") }
        return (entries, vectors)
    }

    /// The next format-2 segment; nil when `last` may be torn and it is (cut short, or its checksum fails, with
    /// nothing after it).
    mutating func segment(dimension: Int, last mayBeTorn: Bool) throws -> (
        entries: [VectorIndexEntry], vectors: [Float]
    )? {
        let start = at
        guard bytes.count - start >= VectorIndexFile.segmentHeaderBytes else {
            if mayBeTorn { return nil }
            throw corrupt("\(bytes.count - start) bytes where a segment starts")
        }
        guard Array(bytes[start..<(start + 4)]) == VectorIndexFile.segmentMagic else {
            throw corrupt("no segment mark at byte \(start)")
        }
        let count = u32(at: start + 4)
        let length = u64(at: start + 8)
        let payloadStart = start + VectorIndexFile.segmentHeaderBytes
        guard length <= UInt64(bytes.count - payloadStart) else {
            if mayBeTorn { return nil }
            throw corrupt("a segment promises \(length) bytes but the file has \(bytes.count - payloadStart)")
        }
        let end = payloadStart + Int(length)
        var crc = CRC32()
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[(start + 4)..<(start + 16)]))
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[payloadStart..<end]))
        guard crc.checksum == u32(at: start + 16) else {
            if mayBeTorn && end == bytes.count { return nil }
            throw corrupt("checksum mismatch in the segment at byte \(start)")
        }
        at = payloadStart
        return try payload(count: UInt64(count), dimension: dimension, end: end)
    }
}
