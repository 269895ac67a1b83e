import Foundation
import SanadNative

/// Optical character recognition through the system Tesseract 5 (`libtesseract.so.5`) and Leptonica
/// (`liblept.so.5`), both opened with `dlopen`. Without either library or the language's trained data, every
/// entry point says what is missing and how to install it; text input to the ingest commands works regardless.
public final class TesseractOCR: @unchecked Sendable {  // immutable after init; Tesseract calls are per-handle
    /// The Tesseract library as the environment names it (`SANAD_TESSERACT`) or the system loader finds it.
    public static let tesseractSpec = NativeLibrarySpec(
        displayName: "Tesseract OCR", environmentVariable: "SANAD_TESSERACT",
        systemNames: ["libtesseract.so.5", "libtesseract.so"],
        installHint: "apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-ara (scripts/setup installs them)")
    /// Leptonica, which reads the image files Tesseract recognises.
    public static let leptonicaSpec = NativeLibrarySpec(
        displayName: "Leptonica", environmentVariable: "SANAD_LEPTONICA",
        systemNames: ["liblept.so.5", "libleptonica.so.6", "liblept.so"],
        installHint: "apt-get install liblept5 (installed with tesseract-ocr; scripts/setup installs it)")

    private typealias Create = @convention(c) () -> OpaquePointer?
    private typealias Init3 = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    private typealias SetImage2 = @convention(c) (OpaquePointer?, OpaquePointer?) -> Void
    private typealias SetPageSegMode = @convention(c) (OpaquePointer?, Int32) -> Void
    private typealias GetUTF8Text = @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    private typealias DeleteText = @convention(c) (UnsafeMutablePointer<CChar>?) -> Void
    private typealias HandleCall = @convention(c) (OpaquePointer?) -> Void
    private typealias Version = @convention(c) () -> UnsafePointer<CChar>?
    private typealias PixRead = @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?
    private typealias PixDestroy = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void

    private let create: Create
    private let init3: Init3
    private let setImage2: SetImage2
    private let setPageSegMode: SetPageSegMode
    private let getText: GetUTF8Text
    private let deleteText: DeleteText
    private let end: HandleCall
    private let delete: HandleCall
    private let pixRead: PixRead
    private let pixDestroy: PixDestroy
    /// The Tesseract version string (`5.3.0`).
    public let version: String
    /// The library files that were loaded, for messages.
    public let tesseractPath: String
    public let leptonicaPath: String

    /// Opens both libraries and resolves every function, or throws `OCRIngestError.ocrUnavailable` with the fix.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let tess: NativeLibrary
        let lept: NativeLibrary
        switch NativeLibrary.load(Self.tesseractSpec, environment: environment) {
        case .success(let library): tess = library
        case .failure(let error): throw OCRIngestError.ocrUnavailable(error.reason)
        }
        switch NativeLibrary.load(Self.leptonicaSpec, environment: environment) {
        case .success(let library): lept = library
        case .failure(let error): throw OCRIngestError.ocrUnavailable(error.reason)
        }
        do {
            create = try tess.require("TessBaseAPICreate", as: Create.self)
            init3 = try tess.require("TessBaseAPIInit3", as: Init3.self)
            setImage2 = try tess.require("TessBaseAPISetImage2", as: SetImage2.self)
            setPageSegMode = try tess.require("TessBaseAPISetPageSegMode", as: SetPageSegMode.self)
            getText = try tess.require("TessBaseAPIGetUTF8Text", as: GetUTF8Text.self)
            deleteText = try tess.require("TessDeleteText", as: DeleteText.self)
            end = try tess.require("TessBaseAPIEnd", as: HandleCall.self)
            delete = try tess.require("TessBaseAPIDelete", as: HandleCall.self)
            let versionFunction = try tess.require("TessVersion", as: Version.self)
            pixRead = try lept.require("pixRead", as: PixRead.self)
            pixDestroy = try lept.require("pixDestroy", as: PixDestroy.self)
            version = versionFunction().map { String(cString: $0) } ?? "unknown"
        } catch {
            throw OCRIngestError.ocrUnavailable("\(error). Fix: \(Self.tesseractSpec.installHint)")
        }
        tesseractPath = tess.path
        leptonicaPath = lept.path
    }

    /// Tesseract page segmentation modes used here (a subset of the library's enum, same values).
    public enum PageSegmentation: Int32, Sendable {
        /// Fully automatic page segmentation (the library default).
        case auto = 3
        /// One uniform block of text: suits a cropped machine-readable zone.
        case singleBlock = 6
    }

    /// The UTF-8 text Tesseract reads from the image file at `path` in `language` (`eng`, `ara`, `eng+ara`).
    /// `dataPath` is the tessdata folder, or nil for the library's default (`TESSDATA_PREFIX`, then the
    /// compiled-in path).
    public func recognize(
        imageAt path: String, language: String, pageSegmentation: PageSegmentation = .auto, dataPath: String? = nil
    ) throws -> String {
        if let problem = NativeLibrary.regularFileProblem(path) {
            throw OCRIngestError.ocrFailed("image \(path): \(problem)")
        }
        guard let api = create() else { throw OCRIngestError.ocrFailed("TessBaseAPICreate returned no handle") }
        defer {
            end(api)
            delete(api)
        }
        let status = language.withCString { lang in
            if let dataPath { return dataPath.withCString { init3(api, $0, lang) } }
            return init3(api, nil, lang)
        }
        guard status == 0 else {
            throw OCRIngestError.ocrUnavailable(
                "Tesseract \(version) has no trained data for language \"\(language)\". Fix: apt-get install "
                    + "tesseract-ocr-\(language.split(separator: "+").first.map(String.init) ?? language) "
                    + "(or set TESSDATA_PREFIX to the folder holding \(language).traineddata)")
        }
        var pix = path.withCString { pixRead($0) }
        guard pix != nil else {
            throw OCRIngestError.ocrFailed(
                "Leptonica could not read image \(path); use a PNG, JPEG or TIFF file")
        }
        defer { pixDestroy(&pix) }
        setPageSegMode(api, pageSegmentation.rawValue)
        setImage2(api, pix)
        guard let text = getText(api) else {
            throw OCRIngestError.ocrFailed("Tesseract returned no text for \(path)")
        }
        defer { deleteText(text) }
        return String(cString: text)
    }
}
