import Foundation
import SanadCore

/// What kind of text a document holds; `auto` decides from the text itself.
public enum DocumentKind: String, Sendable, CaseIterable {
    case auto
    /// A machine-readable zone (passport, ID card, visa).
    case mrz
    /// The PDF417 text of a North American driver licence or ID card.
    case aamva
    /// Anything else: cleaned and chunked for retrieval.
    case text
}

/// One ingested document: what was read, the form proposals it supports, and where its text came from.
public struct IngestedDocument: Sendable {
    public enum Content: Sendable {
        case mrz(MRZResult)
        case aamva(AAMVABarcode)
        case text([OCRTextChunk])
    }

    public let documentID: String
    public let content: Content
    /// Field proposals with evidence (empty for plain text).
    public let proposals: [FieldProposal]
    /// Why nothing is proposed from a zone that was read (a failed check), else nil.
    public let proposalsWithheld: String?
    /// The OCR engine and language when the text came from an image, else nil.
    public let ocr: String?

    public var kind: DocumentKind {
        switch content {
        case .mrz: return .mrz
        case .aamva: return .aamva
        case .text: return .text
        }
    }
}

/// Reads a document's text (or image, through Tesseract) into an `IngestedDocument`.
public enum DocumentIngest {
    /// Reads `text`. With `.auto`: AAMVA when the text starts like barcode text (`@` … `ANSI `), a zone when the
    /// MRZ reader finds one, else plain text. With `.mrz` or `.aamva` the reader's error is thrown as is.
    /// `progress` gets (bytes done, bytes in all) as plain text is chunked, for a progress line on long inputs.
    public static func ingest(
        text: String, documentID: String, kind: DocumentKind = .auto, reference: CivilDate, ocr: String? = nil,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws -> IngestedDocument {
        switch kind {
        case .aamva:
            return aamva(try AAMVAReader.read(text), documentID: documentID, ocr: ocr)
        case .mrz:
            return mrz(try MRZReader.read(text, reference: reference), documentID: documentID, ocr: ocr)
        case .text:
            return try plainText(text, documentID: documentID, ocr: ocr, progress: progress)
        case .auto:
            if looksLikeAAMVA(text) {
                return aamva(try AAMVAReader.read(text), documentID: documentID, ocr: ocr)
            }
            do {
                return mrz(try MRZReader.read(text, reference: reference), documentID: documentID, ocr: ocr)
            } catch OCRIngestError.noMRZFound {
                return try plainText(text, documentID: documentID, ocr: ocr, progress: progress)
            }
        }
    }

    /// Runs Tesseract on the image at `path` (`language`: `eng`, `ara`, `eng+ara`) and ingests the text it reads.
    public static func ingest(
        imageAt path: String, documentID: String, kind: DocumentKind = .auto, language: String = "eng",
        reference: CivilDate, ocr engine: TesseractOCR
    ) throws -> IngestedDocument {
        let text = try engine.recognize(imageAt: path, language: language)
        return try ingest(
            text: text, documentID: documentID, kind: kind, reference: reference,
            ocr: "Tesseract \(engine.version) (\(language))")
    }

    /// Whether the file at `path` starts with the signature of an image format Leptonica reads (PNG, JPEG, TIFF,
    /// GIF, BMP, PNM, WebP).
    public static func isImage(path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 12)) ?? Data())
        return isImage(header: head)
    }

    static func isImage(header h: [UInt8]) -> Bool {
        func starts(_ sig: [UInt8]) -> Bool { h.count >= sig.count && Array(h.prefix(sig.count)) == sig }
        if starts([0x89, 0x50, 0x4E, 0x47]) || starts([0xFF, 0xD8, 0xFF]) { return true }  // PNG, JPEG
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return true }  // TIFF
        if starts(Array("GIF8".utf8)) || starts(Array("BM".utf8)) { return true }
        if h.count >= 12, starts(Array("RIFF".utf8)), Array(h[8..<12]) == Array("WEBP".utf8) { return true }
        // PNM: P1…P6 then whitespace.
        return h.count >= 3 && h[0] == UInt8(ascii: "P") && (UInt8(ascii: "1")...UInt8(ascii: "6")).contains(h[1])
            && [0x20, 0x0A, 0x0D, 0x09].contains(h[2])
    }

    /// `@` first (after leading whitespace) and `ANSI ` (or `AAMVA`) within the header's first bytes.
    static func looksLikeAAMVA(_ text: String) -> Bool {
        let head = text.drop { $0.isWhitespace && $0 != "\n" }.prefix(40)
        return head.first == "@" && (head.contains("ANSI ") || head.contains("AAMVA"))
    }

    static func mrz(_ zone: MRZResult, documentID: String, ocr: String?) -> IngestedDocument {
        do {
            let proposals = try FieldProposer.proposals(from: zone, documentID: documentID)
            return IngestedDocument(
                documentID: documentID, content: .mrz(zone), proposals: proposals, proposalsWithheld: nil, ocr: ocr)
        } catch {
            return IngestedDocument(
                documentID: documentID, content: .mrz(zone), proposals: [], proposalsWithheld: "\(error)", ocr: ocr)
        }
    }

    static func aamva(_ barcode: AAMVABarcode, documentID: String, ocr: String?) -> IngestedDocument {
        IngestedDocument(
            documentID: documentID, content: .aamva(barcode),
            proposals: FieldProposer.proposals(from: barcode, documentID: documentID), proposalsWithheld: nil,
            ocr: ocr)
    }

    static func plainText(
        _ text: String, documentID: String, ocr: String?, progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws -> IngestedDocument {
        let chunks = try OCRText.chunks(of: text, documentID: documentID, progress: progress)
        return IngestedDocument(
            documentID: documentID, content: .text(chunks), proposals: [], proposalsWithheld: nil, ocr: ocr)
    }
}
