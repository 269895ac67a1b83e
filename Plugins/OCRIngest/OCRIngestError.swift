/// The one error type of the OCR-text ingest module. Every message says what was wrong, where (line and column of
/// the machine-readable zone, byte offset and element id of the barcode text) and how to fix it.
public enum OCRIngestError: Error, Equatable, CustomStringConvertible, Sendable {
    /// No machine-readable zone was found in the text.
    case noMRZFound(String)
    /// MRZ-like text was found but it fits no ICAO format (line count and lengths say which).
    case mrzLayout(String)
    /// An AAMVA payload is malformed or truncated: the byte offset, the element (or header part) and the problem.
    case aamva(offset: Int, element: String, message: String)
    /// A proposal was asked of a document that failed its checks; the failing checks are named.
    case notVerified(String)
    /// Invalid chunking parameters.
    case invalidChunking(String)
    /// Tesseract, Leptonica or a language's trained data is missing; the message names the fix.
    case ocrUnavailable(String)
    /// Recognition of one image failed (unreadable file, no text).
    case ocrFailed(String)

    public var description: String {
        switch self {
        case .noMRZFound(let why):
            return "no machine-readable zone found: \(why). Pass the OCR text of the page's MRZ (2 or 3 lines of "
                + "A-Z, 0-9 and '<'); crop the image to the bottom of the data page if the OCR misses it."
        case .mrzLayout(let why):
            return "machine-readable zone has the wrong layout: \(why). ICAO 9303 formats: TD1 3×30, TD2 2×36, "
                + "TD3/MRV-A 2×44, MRV-B 2×36; rescan if characters were dropped."
        case .aamva(let offset, let element, let message):
            return "AAMVA barcode text, \(element) at byte offset \(offset): \(message)"
        case .notVerified(let why):
            return "document not verified, nothing proposed: \(why). Rescan the document or enter the fields by hand."
        case .invalidChunking(let why):
            return "invalid chunking options: \(why)"
        case .ocrUnavailable(let why):
            return "OCR unavailable: \(why). Text input still works: pass the document's text instead of an image."
        case .ocrFailed(let why):
            return "OCR failed: \(why)"
        }
    }
}
