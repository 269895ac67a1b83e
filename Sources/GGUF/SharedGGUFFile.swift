import Foundation
import SanadFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A model is looked at by the host (the plan: summary, memory estimate, context check) and then loaded by an
// engine; both asked for `GGUFFile(path:)`, so the header, the metadata (a vocabulary of 50 000–260 000 strings) and
// the checks were read twice before a first token. `GGUFFile.shared(path:)` hands both the same parsed file while
// one of them holds it, and `ModelValidation.validate` remembers its verdict on a file object.

extension GGUFFile {
    /// The file at `path`, parsed once for all who hold it: the same object as an earlier `shared(path:)` of this
    /// path while that object is alive and the file is still the one it parsed (same device, inode, size and
    /// modification time); otherwise parsed now (`GGUFFile(path:)`, with its errors).
    public static func shared(path: String) throws -> GGUFFile {
        let identity = FileIdentity(path: path)
        if let identity, let file = SharedFiles.table.lookup(path: path, identity: identity) { return file }
        let file = try GGUFFile(path: path)
        if let identity { SharedFiles.table.remember(file, path: path, identity: identity) }
        return file
    }
}

/// What tells one version of a file from another without reading it.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int

    init?(path: String) {
        var s = stat()
        guard stat(path, &s) == 0 else { return nil }
        device = UInt64(s.st_dev)
        inode = UInt64(s.st_ino)
        size = Int64(s.st_size)
        modifiedSeconds = Int(s.st_mtim.tv_sec)
        modifiedNanoseconds = Int(s.st_mtim.tv_nsec)
    }
}

/// The parsed files alive now, by path (weakly held: the table never keeps a model mapped).
final class SharedFiles: @unchecked Sendable {  // @unchecked: every access under `lock`
    static let table = SharedFiles()

    private struct Entry {
        weak var file: GGUFFile?
        let identity: FileIdentity
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]

    func lookup(path: String, identity: FileIdentity) -> GGUFFile? {
        lock.withLock {
            guard let entry = entries[path], entry.identity == identity else { return nil }
            return entry.file
        }
    }

    func remember(_ file: GGUFFile, path: String, identity: FileIdentity) {
        lock.withLock {
            entries = entries.filter { $0.value.file != nil }
            entries[path] = Entry(file: file, identity: identity)
        }
    }
}

/// `ModelValidation.validate`'s verdict on one file object, computed once.
final class ValidationVerdict: @unchecked Sendable {  // @unchecked: `verdict` only under `lock`
    private let lock = NSLock()
    private var verdict: Result<Void, any Error>?

    /// The verdict, running `check` the first time.
    func get(_ check: () throws -> Void) throws {
        lock.lock()
        defer { lock.unlock() }
        if verdict == nil { verdict = Result { try check() } }
        try verdict!.get()
    }
}
