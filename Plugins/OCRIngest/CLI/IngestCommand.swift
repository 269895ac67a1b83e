import Foundation
import OCRIngestPlugin
import SanadCommandLine
import SanadCore
import SanadHost
import SanadIndex
import SanadNative

/// `sanad ingest`: reads documents (text or images) into zones, barcodes or text chunks and the form fields they fill.
public enum IngestCommand: SanadCommand {
    public static let name = "ingest"
    public static let summary =
        "Read a passport MRZ, a licence barcode text or a document (text or image) into form fields"
    public static let help = """
        Usage: sanad ingest [--kind auto|mrz|aamva|text] [--lang LANGS] [--today YYYY-MM-DD] [--json] FILE... | -

        Reads each FILE (or standard input for '-'): an image (PNG, JPEG, TIFF, GIF, BMP, PNM, WebP) goes through
        the system Tesseract library (libtesseract, loaded at run time; scripts/setup installs it with the English
        and Arabic data); any other file is read as UTF-8 text. Then, with --kind auto (the default):
          - AAMVA barcode text (a driver licence or ID card's PDF417 text, starting '@' … 'ANSI ') → the DMV
            renewal identity and address fields;
          - a machine-readable zone (TD1/TD2/TD3 passports and ID cards, MRV-A/MRV-B visas), found anywhere in the
            text, OCR confusions repaired only where the check digits confirm it → the DS-160 passport and identity
            fields, proposed only when every check holds;
          - anything else → cleaned text in overlapping chunks with their byte offsets, for retrieval.
        Every proposed field carries its evidence: the document, the zone field or barcode element, the repairs.

        Options:
          --kind KIND       auto (default), mrz, aamva or text: read the document as that kind only
          --lang LANGS      Tesseract languages for images (default: eng; ara, eng+ara, …)
          --today DATE      the date two-digit MRZ years resolve against (default: today)
          --id ID           the document id in the evidence (default: the file name; 'stdin' for '-'); with
                            several files, ID-1, ID-2, …
          --json            one JSON object per document, one per line
          --index FILE      also embed every text chunk (tier's embedding model) into the vector index FILE
                            (created when missing; see 'sanad index'), id DOC#N, with the document id, chunk
                            number and byte range as metadata: 'sanad index query --index FILE' then retrieves
                            the chunks with their citations
        \(HostContext.optionsHelp)

        Exit status: 0 when every document was read (a zone that fails a check is read: it is reported invalid
        and proposes nothing); 1 when a document could not be read (the others are still reported); 64 usage.

        Examples:
          sanad ingest passport.png
          printf 'P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\\nL898902C36UTO7408122F1204159ZE184226B<<<<<10\\n' \\
            | sanad ingest --today 2010-01-01 -
        """

    /// The largest text or image file read (a scanned page is far smaller).
    static let maxFileBytes = DocumentText.maxBytes

    public static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let json = arguments.flag("--json")
        let kindName = try arguments.option("--kind") ?? DocumentKind.auto.rawValue
        guard let kind = DocumentKind(rawValue: kindName) else {
            throw UsageError(
                "unknown --kind '\(kindName)'; use one of \(DocumentKind.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        let language = try arguments.option("--lang") ?? DocumentIngestPlugin.defaultLanguage
        guard !language.isEmpty, language.allSatisfy({ $0.isLetter || $0 == "+" || $0 == "_" }) else {
            throw UsageError("--lang '\(language)' is not a Tesseract language list such as eng or eng+ara")
        }
        let today = try arguments.option("--today").map(parseDate) ?? DocumentIngest.calendarDate(Date())
        let idOption = try arguments.option("--id")
        let indexPath = try arguments.option("--index")
        let hostOptions = try HostOptions.parse(&arguments)
        let files = try arguments.positionals(min: 1, names: "FILE (or '-' for standard input)")
        let host = indexPath != nil ? try HostContext.load(hostOptions) : nil
        var ocr: Result<TesseractOCR, any Error>?
        var failed = 0
        var chunks: [OCRTextChunk] = []
        for (n, file) in files.enumerated() {
            let documentID =
                idOption.map { files.count > 1 ? "\($0)-\(n + 1)" : $0 }
                ?? (file == "-" ? "stdin" : URL(fileURLWithPath: file).lastPathComponent)
            do {
                let document = try read(
                    file, documentID: documentID, kind: kind, language: language, today: today, ocr: &ocr)
                if json { print(document.json.jsonString) } else { print(summary(document, file: file)) }
                if case .text(let c) = document.content { chunks += c }
            } catch {
                failed += 1
                let message = "\(error)"
                let name = file == "-" ? "standard input" : file
                printError("Error: " + (message.hasPrefix(name) ? message : "\(name): \(message)"))
            }
        }
        if let indexPath, let host {
            try await index(chunks, into: indexPath, host: host)
        }
        return failed == 0 ? ExitCode.success : ExitCode.failure
    }

    /// Embeds `chunks` with the tier's embedding model and adds them to the index file at `path` (id `DOC#N`,
    /// metadata: document id, chunk number, byte range in the original), replacing chunks with the same ids.
    static func index(_ chunks: [OCRTextChunk], into path: String, host: HostContext) async throws {
        guard !chunks.isEmpty else {
            printError("note: no text chunks to add to \(path) (zones and barcodes are not indexed)")
            return
        }
        let model = try await host.openEmbeddingModel(model: nil, backend: nil, threads: nil)
        let entries = chunks.map { chunk in
            VectorIndexEntry(
                id: "\(chunk.documentID)#\(chunk.index)", text: chunk.text,
                metadata: [
                    "documentId": chunk.documentID, "chunk": String(chunk.index),
                    "bytes": "\(chunk.sourceRange.lowerBound)-\(chunk.sourceRange.upperBound)",
                ])
        }
        let count = try await addToIndex(
            path, entries: entries, labels: entries.map(\.id), model: model, identity: try host.indexModel(nil))
        printError("\(path): \(chunks.count) chunk\(chunks.count == 1 ? "" : "s") added, \(count) entries")
    }

    /// Reads one document: an image through Tesseract (`ocr` is opened on the first image and kept), else text.
    public static func read(
        _ file: String, documentID: String, kind: DocumentKind, language: String, today: CivilDate,
        ocr: inout Result<TesseractOCR, any Error>?
    ) throws -> IngestedDocument {
        if file != "-", try isImage(file) {
            if ocr == nil { ocr = Result { try TesseractOCR() } }
            return try DocumentIngest.ingest(
                imageAt: file, documentID: documentID, kind: kind, language: language, reference: today,
                ocr: try ocr!.get())
        }
        let text = try readDocumentText(file)
        let name = file == "-" ? "standard input" : file
        return try DocumentIngest.ingest(
            text: text, documentID: documentID, kind: kind, reference: today,
            progress: text.utf8.count >= progressBytes ? { printProgress(name, $0, $1) } : nil)
    }

    /// Texts from this size on get a progress line on standard error while they are chunked.
    static let progressBytes = 4 << 20

    /// `NAME: chunking 12 of 50 MiB`, rewritten in place; a newline once done.
    static func printProgress(_ name: String, _ done: Int, _ total: Int) {
        let line = "\(name): chunking \((done + (1 << 19)) >> 20) of \((total + (1 << 19)) >> 20) MiB"
        FileHandle.standardError.write(Data(("\r" + line + (done >= total ? "\n" : "")).utf8))
    }

    static func parseDate(_ text: String) throws -> CivilDate {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, text.count == 10,
            let date = CivilDate(year: parts[0], month: parts[1], day: parts[2])
        else { throw UsageError("--today '\(text)' is not a date like 2026-11-24") }
        return date
    }

    static func isImage(_ path: String) throws -> Bool {
        if let problem = NativeLibrary.regularFileProblem(path) { throw SanadError.engine(problem) }
        return DocumentIngest.isImage(path: path)
    }

    /// A document's text: standard input for '-', else a regular file of at most `maxFileBytes`, valid UTF-8.
    static func readDocumentText(_ path: String) throws -> String {
        let data: Data
        if path == "-" {
            guard let d = try DocumentText.read(FileHandle.standardInput) else {
                throw SanadError.engine(DocumentText.tooLarge("standard input", bytes: nil))
            }
            data = d
        } else {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            guard size <= maxFileBytes else { throw SanadError.engine(DocumentText.tooLarge(path, bytes: size)) }
            guard let d = FileManager.default.contents(atPath: path) else {
                throw SanadError.engine("\(path): cannot be read (check the path and its permissions)")
            }
            data = d
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SanadError.engine(
                "\(path == "-" ? "standard input" : path) is neither an image nor UTF-8 text; "
                    + "save the scan as PNG/JPEG/TIFF or the text as UTF-8")
        }
        return text
    }

    /// What a person reads: the kind, whether it verified, and each proposed field with its evidence.
    public static func summary(_ d: IngestedDocument, file: String) -> String {
        var lines: [String] = []
        let via = d.ocr.map { " (OCR: \($0))" } ?? ""
        switch d.content {
        case .mrz(let zone):
            let verdict =
                zone.isValid
                ? "valid: every check digit held"
                : "NOT valid: "
                    + (zone.failedChecks.map { "\($0.rawValue) check failed" } + zone.problems).joined(
                        separator: "; ")
            lines.append("\(d.documentID): MRZ \(zone.format.rawValue)\(via) — \(verdict)")
            for r in zone.repairs { lines.append("  repaired: \(r.description)") }
            for n in zone.notes { lines.append("  note: \(n)") }
        case .aamva(let barcode):
            lines.append(
                "\(d.documentID): AAMVA \(barcode.documentKind ?? "?") barcode text, version \(barcode.header.version)"
                    + "\(barcode.issuerJurisdiction.map { ", issuer \($0)" } ?? "")\(via)")
            for w in barcode.warnings { lines.append("  warning: \(w)") }
        case .text(let chunks):
            lines.append("\(d.documentID): plain text\(via), \(chunks.count) chunk\(chunks.count == 1 ? "" : "s")")
            for c in chunks.prefix(5) {
                let first = c.text.split(separator: "\n").first.map(String.init) ?? ""
                lines.append(
                    "  [\(c.index)] bytes \(c.sourceRange.lowerBound)–\(c.sourceRange.upperBound): \(first.prefix(70))")
            }
            if chunks.count > 5 { lines.append("  … \(chunks.count - 5) more (--json lists them all)") }
        }
        if let withheld = d.proposalsWithheld { lines.append("  no fields proposed: \(withheld)") }
        if !d.proposals.isEmpty {
            lines.append("  proposed fields (confirm each in the form):")
            let width = d.proposals.map(\.fieldID.count).max() ?? 0
            for p in d.proposals {
                let pad = String(repeating: " ", count: width - p.fieldID.count)
                lines.append("    \(p.fieldID)\(pad)  \(p.value)   ← \(p.evidence.sourceField)")
                for r in p.evidence.repairs { lines.append("      repaired: \(r)") }
                for n in p.evidence.notes { lines.append("      note: \(n)") }
            }
        }
        return lines.joined(separator: "\n")
    }
}
