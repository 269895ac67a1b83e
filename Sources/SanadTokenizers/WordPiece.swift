import Foundation

/// A BERT WordPiece tokenizer read from a Hugging Face model folder: `tokenizer.json` for the settings (normalizer,
/// special tokens, `[UNK]`, the `##` prefix, the word length limit) and `vocab.txt` for the vocabulary (one token a
/// line, the line number its id; read as bytes, see `ByteStringTable`). Ids are those of Hugging Face `tokenizers`:
///
/// - special tokens (`added_tokens`, case-sensitive, longest first) are cut out of the raw text before anything else;
/// - the rest is normalised and split into words (`BertPreTokenizer`);
/// - each word becomes the longest vocabulary prefix, then `##`-continuations, longest first; a word with a part no
///   token covers, or longer than `max_input_chars_per_word` scalars, becomes `[UNK]`;
/// - `[CLS]` … `[SEP]` around the whole.
public struct WordPieceTokenizer: Sendable {
    public let vocabularySize: Int
    public let classifierID: Int32
    public let separatorID: Int32
    public let unknownID: Int32
    public let paddingID: Int32
    private let vocabulary: ByteStringTable
    private let pieces: [String]
    private let continuation: [UInt8]
    private let maxWordScalars: Int
    private let preTokenizer: BertPreTokenizer
    /// Special-token texts with their ids, longest first.
    private let specials: [([Unicode.Scalar], Int32)]

    /// Reads `tokenizer.json` and `vocab.txt` in `folder`.
    public init(folder: URL) throws {
        let settingsURL = folder.appendingPathComponent("tokenizer.json")
        let vocabURL = folder.appendingPathComponent("vocab.txt")
        let path = settingsURL.path
        func fail(_ key: String, _ what: String) -> TokenizerError {
            .inconsistent(path: path, key: key, what: what)
        }
        guard let settingsData = FileManager.default.contents(atPath: path),
            let json = try? JSONSerialization.jsonObject(with: settingsData) as? [String: Any]
        else { throw fail("(file)", "missing or not a JSON object") }
        guard let model = json["model"] as? [String: Any], model["type"] as? String == "WordPiece" else {
            throw TokenizerError.unsupportedModel(
                path: path, model: "\((json["model"] as? [String: Any])?["type"] ?? "none")", supported: ["WordPiece"])
        }
        guard let vocabData = FileManager.default.contents(atPath: vocabURL.path) else {
            throw TokenizerError.missingKey(path: vocabURL.path, key: "(the file)")
        }
        var lines = vocabData.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        var table = ByteStringTable(expectedCount: lines.count)
        var pieces: [String] = []
        pieces.reserveCapacity(lines.count)
        for (id, line) in lines.enumerated() {
            var bytes = Array(line)
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
            guard table.insertIfAbsent(bytes, value: Int32(id)).inserted else {
                throw TokenizerError.inconsistent(
                    path: vocabURL.path, key: "line \(id + 1)", what: "token repeats an earlier line")
            }
            pieces.append(String(decoding: bytes, as: UTF8.self))
        }
        if let inJSON = model["vocab"] as? [String: Any], inJSON.count != lines.count {
            throw fail("model.vocab", "has \(inJSON.count) tokens but vocab.txt has \(lines.count)")
        }
        func id(_ text: String, _ key: String) throws -> Int32 {
            guard let v = table.value(Array(text.utf8)) else { throw fail(key, "'\(text)' is not in vocab.txt") }
            return v
        }
        vocabulary = table
        self.pieces = pieces
        vocabularySize = lines.count
        unknownID = try id(model["unk_token"] as? String ?? "[UNK]", "model.unk_token")
        classifierID = try id("[CLS]", "post_processor")
        separatorID = try id("[SEP]", "post_processor")
        paddingID = (try? id("[PAD]", "padding")) ?? 0
        continuation = Array((model["continuing_subword_prefix"] as? String ?? "##").utf8)
        maxWordScalars = model["max_input_chars_per_word"] as? Int ?? 100
        let normalizer = json["normalizer"] as? [String: Any] ?? [:]
        if let kind = normalizer["type"] as? String, kind != "BertNormalizer" {
            throw fail("normalizer.type", "'\(kind)' is not supported (BertNormalizer only)")
        }
        let lowercase = normalizer["lowercase"] as? Bool ?? true
        preTokenizer = BertPreTokenizer(
            lowercase: lowercase, stripAccents: normalizer["strip_accents"] as? Bool ?? lowercase,
            separateCJK: normalizer["handle_chinese_chars"] as? Bool ?? true)
        var specials: [([Unicode.Scalar], Int32)] = []
        for (i, entry) in (json["added_tokens"] as? [[String: Any]] ?? []).enumerated() {
            guard let content = entry["content"] as? String, let tokenID = entry["id"] as? Int,
                (0..<lines.count).contains(tokenID), !content.isEmpty
            else { throw fail("added_tokens[\(i)]", "needs a non-empty 'content' and an 'id' in the vocabulary") }
            specials.append((Array(content.unicodeScalars), Int32(tokenID)))
        }
        self.specials = specials.sorted { $0.0.count > $1.0.count }
    }

    /// `[CLS]`, the ids of `text`, `[SEP]`.
    public func encode(_ text: String) -> [Int32] {
        var ids: [Int32] = [classifierID]
        let scalars = Array(text.unicodeScalars)
        var start = 0
        var i = 0
        while i < scalars.count {
            guard let (length, special) = specialToken(in: scalars, at: i) else {
                i += 1
                continue
            }
            appendWords(scalars[start..<i], to: &ids)
            ids.append(special)
            i += length
            start = i
        }
        appendWords(scalars[start..<scalars.count], to: &ids)
        ids.append(separatorID)
        return ids
    }

    /// The vocabulary text of `id` (for `sanad tokenize`-style displays), or nil.
    public func piece(_ id: Int32) -> String? {
        pieces.indices.contains(Int(id)) ? pieces[Int(id)] : nil
    }

    /// The longest special token starting at `i`: its length in scalars and its id.
    private func specialToken(in scalars: [Unicode.Scalar], at i: Int) -> (Int, Int32)? {
        for (text, id) in specials where i + text.count <= scalars.count {
            var same = true
            for k in 0..<text.count where scalars[i + k] != text[k] {
                same = false
                break
            }
            if same { return (text.count, id) }
        }
        return nil
    }

    private func appendWords(_ scalars: ArraySlice<Unicode.Scalar>, to ids: inout [Int32]) {
        guard !scalars.isEmpty else { return }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        for word in preTokenizer.words(Substring(String(text))) {
            appendWordPieces(word, to: &ids)
        }
    }

    /// Greedy longest-match-first over one word; the whole word is `[UNK]` when any part has no token.
    private func appendWordPieces(_ word: [Unicode.Scalar], to ids: inout [Int32]) {
        guard word.count <= maxWordScalars else {
            ids.append(unknownID)
            return
        }
        var bytes: [UInt8] = []
        var bounds: [Int] = [0]  // byte offset of each scalar boundary
        for s in word {
            bytes.append(contentsOf: UTF8.encode(s).map { Array($0) } ?? [])
            bounds.append(bytes.count)
        }
        var found: [Int32] = []
        var key: [UInt8] = []
        key.reserveCapacity(continuation.count + bytes.count)
        var start = 0
        while start < word.count {
            var end = word.count
            var match: Int32?
            while end > start {
                key.removeAll(keepingCapacity: true)
                if start > 0 { key.append(contentsOf: continuation) }
                key.append(contentsOf: bytes[bounds[start]..<bounds[end]])
                if let id = vocabulary.value(key) {
                    match = id
                    break
                }
                end -= 1
            }
            guard let match else {
                ids.append(unknownID)
                return
            }
            found.append(match)
            start = end
        }
        ids.append(contentsOf: found)
    }
}
