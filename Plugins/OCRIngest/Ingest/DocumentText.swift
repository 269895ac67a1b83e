import Foundation

/// Reading a document's text with the same size limit whatever it comes from (a file or standard input).
public enum DocumentText {
    /// The largest text or image read (a scanned page is far smaller).
    public static let maxBytes = 64 << 20

    /// Reads `handle` to its end in pieces, stopping as soon as more than `limit` bytes arrived: nil then, so a
    /// pipe of endless data costs `limit` bytes of memory, not all of it.
    public static func read(_ handle: FileHandle, limit: Int = maxBytes) throws -> Data? {
        var data = Data()
        while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
            guard data.count + piece.count <= limit else { return nil }
            data.append(piece)
        }
        return data
    }

    /// The message for a document over the limit: which one, how big (when known), and the limit.
    public static func tooLarge(_ name: String, bytes: Int?) -> String {
        "\(name): \(bytes.map { "\($0) bytes" } ?? "more than \(maxBytes) bytes"); a document text is read up to "
            + "\(maxBytes >> 20) MiB (split it, or pass only the pages to read)"
    }
}
