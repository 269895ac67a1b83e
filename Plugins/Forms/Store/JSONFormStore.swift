import Foundation
import SanadCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The fallback store when SQLite cannot be loaded: every session in one JSON file, rewritten on each write to a
/// temporary file that is flushed (`fsync`) and renamed over the old one, so the file on disk is always either the
/// old or the new whole state.
public final class JSONFormStore: FormStore {
    public static let formatVersion = 1
    let file: URL
    public var location: String { "JSON file store, \(file.path)" }
    private var all: [SessionRecord]

    public init(file: URL) throws {
        self.file = file
        guard FileManager.default.fileExists(atPath: file.path) else {
            all = []
            return
        }
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw FormError.store("\(file.path): cannot be read (check its permissions)")
        }
        let fail: (String, String) -> any Error = { FormError.store("\(file.path): \($0): \($1)") }
        let root: JSONValue
        do { root = try StrictJSON(maximumBytes: 256 << 20).parse(Array(data)) } catch {
            throw FormError.store("\(file.path): damaged (\(error)); restore a backup into a new store folder")
        }
        guard let version = root["formatVersion"]?.intValue else { throw fail("formatVersion", "missing") }
        guard version <= Self.formatVersion else {
            throw FormError.store(
                "\(file.path) has format \(version); this sanad reads \(Self.formatVersion) at most. Use a newer sanad")
        }
        all = try (root["sessions"]?.arrayValue ?? []).enumerated().map {
            try SessionRecord(json: $0.element, path: "sessions[\($0.offset)]", checkingID: false, fail: fail)
        }
    }

    public func sessions() throws -> [SessionRecord] { all }

    public func session(_ id: String) throws -> SessionRecord? {
        try SessionID.validate(id)
        return all.first { $0.id == id }
    }

    public func create(_ session: SessionRecord) throws {
        try SessionID.validate(session.id)
        guard try self.session(session.id) == nil else {
            throw FormError.invalidRequest("a form session '\(session.id)' already exists in \(location)")
        }
        try write(all + [session])
    }

    public func save(_ answer: StoredAnswer, session id: String) throws {
        try update(id) { s in
            s.answers.removeAll { $0.fieldID == answer.fieldID }
            s.answers.append(answer)
        }
    }

    public func remove(field: String, session id: String) throws {
        try update(id) { $0.answers.removeAll { $0.fieldID == field } }
    }

    public func replace(_ session: SessionRecord) throws {
        try SessionID.validate(session.id)
        try write(all.filter { $0.id != session.id } + [session])
    }

    public func delete(session id: String) throws { try write(all.filter { $0.id != id }) }

    private func update(_ id: String, _ change: (inout SessionRecord) -> Void) throws {
        try SessionID.validate(id)
        guard let i = all.firstIndex(where: { $0.id == id }) else {
            throw FormError.unknownSession(id: id, store: location)
        }
        var next = all
        change(&next[i])
        next[i].answers.sort { $0.sequence < $1.sequence }
        try write(next)
    }

    /// Writes `sessions` durably, then makes them the state in memory.
    private func write(_ sessions: [SessionRecord]) throws {
        let root = JSONValue.object([
            "formatVersion": .number(Double(Self.formatVersion)), "sessions": .array(sessions.map(\.json)),
        ])
        try writeDurably(Data(root.prettyString.utf8), to: file)
        all = sessions
    }
}

/// Writes `data` to a temporary file beside `url`, flushes it, renames it over `url` and flushes the folder; on
/// any failure (a full disk, a file-size limit) the old file is untouched and the error names the file.
func writeDurably(_ data: Data, to url: URL) throws {
    let temporary = url.path + ".tmp-\(getpid())"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { throw FormError.store("\(temporary): cannot be created: \(String(cString: strerror(errno)))") }
    var failure: String?
    data.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return }
        var offset = 0
        while offset < raw.count {
            let n = write(fd, base + offset, raw.count - offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                failure = String(cString: strerror(errno))
                return
            }
            offset += n
        }
    }
    if failure == nil && fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
    close(fd)
    if let failure {
        unlink(temporary)
        throw FormError.store("\(url.path): not written (\(failure)); the previous contents are unchanged")
    }
    guard rename(temporary, url.path) == 0 else {
        let reason = String(cString: strerror(errno))
        unlink(temporary)
        throw FormError.store("\(url.path): not replaced (\(reason)); the previous contents are unchanged")
    }
    let folder = open(url.deletingLastPathComponent().path, O_RDONLY)
    if folder >= 0 {
        fsync(folder)
        close(folder)
    }
}
