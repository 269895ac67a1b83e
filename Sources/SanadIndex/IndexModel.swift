import Foundation
import SanadArchive

/// The embedding model an index's vectors come from: its name and the SHA-256 of its weights. An index file
/// records it; adding or querying with another model is refused with both named (vectors of two models do not
/// compare, even at the same dimension).
public struct IndexModel: Sendable, Equatable, CustomStringConvertible {
    /// The model as resolved: its folder or file name (`all-MiniLM-L6-v2`, `bge-small.gguf`).
    public var id: String
    /// SHA-256 (hex) of the weights file.
    public var digest: String

    public init(id: String, digest: String) {
        self.id = id
        self.digest = digest
    }

    public var description: String { "\(id) (weights sha256 \(digest.prefix(12)))" }

    /// The model at `url`: a .gguf file, or a folder whose `model.safetensors` holds the weights. The digest is
    /// remembered per file (path, size, modification time) in `SANAD_DIGEST_CACHE`, else
    /// `$XDG_CACHE_HOME/sanad/digests.tsv`, else `~/.cache/sanad/digests.tsv`, so a query does not hash the weights
    /// again; where the cache cannot be written, every run hashes.
    public static func of(
        _ url: URL, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> IndexModel {
        var isFolder: ObjCBool = false
        FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
        let weights = isFolder.boolValue ? url.appendingPathComponent("model.safetensors") : url
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: weights.path),
            let size = attributes[.size] as? Int, let modified = attributes[.modificationDate] as? Date
        else {
            throw VectorIndexError.io(path: weights.path, operation: "read the model's weights", reason: "no such file")
        }
        let key = "\(size)\t\(Int64(modified.timeIntervalSince1970 * 1000))\t\(weights.path)"
        let cache = cacheFile(environment)
        let lines = cache.flatMap { try? String(contentsOf: $0, encoding: .utf8) }?.split(separator: "\n") ?? []
        if let line = lines.first(where: { $0.hasSuffix("\t" + key) }), let digest = line.split(separator: "\t").first {
            return IndexModel(id: url.lastPathComponent, digest: String(digest))
        }
        guard let data = FileManager.default.contents(atPath: weights.path) else {
            throw VectorIndexError.io(path: weights.path, operation: "read the model's weights", reason: "not readable")
        }
        let digest = sha256Hex([UInt8](data))
        if let cache {
            // Other files' lines kept, this file's old lines dropped; a failed write only costs a hash next time.
            let kept = lines.filter { !$0.hasSuffix("\t" + weights.path) }.map(String.init)
            try? FileManager.default.createDirectory(
                at: cache.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? (kept + [digest + "\t" + key]).joined(separator: "\n").appending("\n")
                .write(to: cache, atomically: true, encoding: .utf8)
        }
        return IndexModel(id: url.lastPathComponent, digest: digest)
    }

    static func cacheFile(_ environment: [String: String]) -> URL? {
        if let named = environment["SANAD_DIGEST_CACHE"], !named.isEmpty { return URL(fileURLWithPath: named) }
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("sanad/digests.tsv")
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home).appendingPathComponent(".cache/sanad/digests.tsv")
        }
        return nil
    }
}
