import Foundation

/// One file in a ZIP archive: a relative path with `/` separators, and its bytes.
public struct ZipEntry: Sendable, Equatable {
    public var path: String
    public var bytes: [UInt8]

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }
}

/// Why an archive was refused.
public struct ZipError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// ZIP archives (APPNOTE 6.3) of stored, uncompressed entries with UTF-8 names: what `unzip -t`, Python's
/// `zipfile` and every desktop reads. Backups are small text files, so storing them keeps the writer and the reader
/// short and every byte checkable. The reader refuses anything it did not write in that shape: compression,
/// encryption, ZIP64, names that leave the archive's folder, duplicates, and a CRC or size that does not match.
public enum ZipArchive {
    static let localSignature: UInt32 = 0x0403_4b50
    static let centralSignature: UInt32 = 0x0201_4b50
    static let endSignature: UInt32 = 0x0605_4b50
    static let utf8Flag: UInt16 = 1 << 11
    static let versionNeeded: UInt16 = 20

    /// The archive holding `entries` in order, each stamped with `modified` (local DOS time, as ZIP keeps it).
    public static func write(_ entries: [ZipEntry], modified: Date) throws -> [UInt8] {
        guard entries.count < 0xFFFF else {
            throw ZipError("\(entries.count) files: more than a ZIP without ZIP64 holds")
        }
        let (time, date) = dosTimeAndDate(modified)
        var out: [UInt8] = []
        var central: [UInt8] = []
        for entry in entries {
            try checkPath(entry.path)
            let name = Array(entry.path.utf8)
            guard entry.bytes.count < 0xFFFF_FFFF, out.count < 0xFFFF_FFFF else {
                throw ZipError("\(entry.path): over 4 GiB, more than a ZIP without ZIP64 holds")
            }
            let crc = CRC32.of(entry.bytes)
            let offset = UInt32(out.count)
            let size = UInt32(entry.bytes.count)
            out.append(le32: localSignature)
            out.append(le16: versionNeeded)
            out.append(le16: utf8Flag)
            out.append(le16: 0)  // stored
            out.append(le16: time)
            out.append(le16: date)
            out.append(le32: crc)
            out.append(le32: size)
            out.append(le32: size)
            out.append(le16: UInt16(name.count))
            out.append(le16: 0)  // extra field length
            out += name
            out += entry.bytes

            central.append(le32: centralSignature)
            central.append(le16: 0x0300 | versionNeeded)  // made by: Unix
            central.append(le16: versionNeeded)
            central.append(le16: utf8Flag)
            central.append(le16: 0)
            central.append(le16: time)
            central.append(le16: date)
            central.append(le32: crc)
            central.append(le32: size)
            central.append(le32: size)
            central.append(le16: UInt16(name.count))
            central.append(le16: 0)  // extra
            central.append(le16: 0)  // comment
            central.append(le16: 0)  // disk
            central.append(le16: 0)  // internal attributes
            central.append(le32: UInt32(0o100644) << 16)  // external: a regular file, rw-r--r--
            central.append(le32: offset)
            central += name
        }
        guard out.count + central.count < 0xFFFF_FFFF else { throw ZipError("over 4 GiB in all: needs ZIP64") }
        let centralOffset = UInt32(out.count)
        out += central
        out.append(le32: endSignature)
        out.append(le16: 0)
        out.append(le16: 0)
        out.append(le16: UInt16(entries.count))
        out.append(le16: UInt16(entries.count))
        out.append(le32: UInt32(central.count))
        out.append(le32: centralOffset)
        out.append(le16: 0)  // comment length
        return out
    }

    /// The entries of an archive, every size, offset, name and CRC checked.
    public static func read(_ bytes: [UInt8]) throws -> [ZipEntry] {
        guard bytes.count >= 22 else {
            throw ZipError("\(bytes.count) bytes: too short for a ZIP archive; it may be truncated")
        }
        // The end record is the last thing in the file, followed by at most a 65535-byte comment.
        var end = -1
        var i = bytes.count - 22
        while i >= max(0, bytes.count - 22 - 0xFFFF) {
            if bytes.le32(at: i) == endSignature, i + 22 + Int(bytes.le16(at: i + 20)) == bytes.count {
                end = i
                break
            }
            i -= 1
        }
        guard end >= 0 else { throw ZipError("no end-of-archive record: not a ZIP archive, or truncated") }
        let count = Int(bytes.le16(at: end + 10))
        let centralSize = Int(bytes.le32(at: end + 12))
        let centralOffset = Int(bytes.le32(at: end + 16))
        guard bytes.le16(at: end + 4) == 0, bytes.le16(at: end + 6) == 0, bytes.le16(at: end + 8) == count else {
            throw ZipError("a multi-part archive: not supported")
        }
        guard centralOffset <= end, centralSize == end - centralOffset else {
            throw ZipError("the central directory is not where the end record says: the archive is damaged")
        }
        var entries: [ZipEntry] = []
        var seen = Set<String>()
        var p = centralOffset
        for n in 0..<count {
            guard p + 46 <= end, bytes.le32(at: p) == centralSignature else {
                throw ZipError("entry \(n + 1) of the central directory is damaged")
            }
            let flags = bytes.le16(at: p + 8)
            let method = bytes.le16(at: p + 10)
            let crc = bytes.le32(at: p + 16)
            let packed = Int(bytes.le32(at: p + 20))
            let size = Int(bytes.le32(at: p + 24))
            let nameLength = Int(bytes.le16(at: p + 28))
            let extraLength = Int(bytes.le16(at: p + 30))
            let commentLength = Int(bytes.le16(at: p + 32))
            let local = Int(bytes.le32(at: p + 42))
            let next = p + 46 + nameLength + extraLength + commentLength
            guard next <= end else { throw ZipError("entry \(n + 1) of the central directory runs past its end") }
            guard let path = String(validating: bytes[(p + 46)..<(p + 46 + nameLength)], as: UTF8.self) else {
                throw ZipError("entry \(n + 1): the name is not UTF-8")
            }
            guard flags & 1 == 0 else { throw ZipError("\(path): encrypted entries are not supported") }
            guard method == 0, packed == size else {
                throw ZipError("\(path): compressed (method \(method)); Sanad writes and reads stored entries only")
            }
            try checkPath(path)
            guard seen.insert(path).inserted else { throw ZipError("\(path) is in the archive twice") }
            guard local + 30 <= centralOffset, bytes.le32(at: local) == localSignature else {
                throw ZipError("\(path): the local header is missing or damaged")
            }
            let localName = Int(bytes.le16(at: local + 26))
            let localExtra = Int(bytes.le16(at: local + 28))
            let start = local + 30 + localName + localExtra
            guard localName == nameLength, start + size <= centralOffset, bytes.le32(at: local + 14) == crc,
                Int(bytes.le32(at: local + 18)) == size, Int(bytes.le32(at: local + 22)) == size,
                bytes.le16(at: local + 8) == method,
                bytes[(local + 30)..<(local + 30 + localName)].elementsEqual(bytes[(p + 46)..<(p + 46 + nameLength)])
            else { throw ZipError("\(path): the local header does not match the central directory") }
            let data = Array(bytes[start..<(start + size)])
            guard CRC32.of(data) == crc else {
                throw ZipError("\(path): the CRC does not match: the data was changed or damaged")
            }
            entries.append(ZipEntry(path: path, bytes: data))
            p = next
        }
        return entries
    }

    /// A relative path that stays inside the archive's folder: no leading `/`, no `..`, no `\`, no empty parts.
    static func checkPath(_ path: String) throws {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.isEmpty, path.utf8.count <= 0xFFFF, !path.contains("\\"), !path.contains("\0"),
            parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })
        else { throw ZipError("'\(path)' is not a safe relative file name") }
    }

    /// MS-DOS time and date (two-second resolution, years 1980–2107) of `date` in the local time zone.
    static func dosTimeAndDate(_ date: Date) -> (UInt16, UInt16) {
        let c = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let year = min(max((c.year ?? 1980) - 1980, 0), 127)
        let time = UInt16((c.hour ?? 0) << 11 | (c.minute ?? 0) << 5 | (c.second ?? 0) / 2)
        let day = UInt16(year << 9 | (c.month ?? 1) << 5 | (c.day ?? 1))
        return (time, day)
    }
}

extension [UInt8] {
    fileprivate mutating func append(le16 v: UInt16) {
        append(UInt8(v & 0xFF))
        append(UInt8(v >> 8))
    }

    fileprivate mutating func append(le32 v: UInt32) {
        for s in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: v >> UInt32(s))) }
    }

    fileprivate func le16(at i: Int) -> UInt16 { UInt16(self[i]) | UInt16(self[i + 1]) << 8 }

    fileprivate func le32(at i: Int) -> UInt32 {
        UInt32(self[i]) | UInt32(self[i + 1]) << 8 | UInt32(self[i + 2]) << 16 | UInt32(self[i + 3]) << 24
    }
}
