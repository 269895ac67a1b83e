import Foundation

/// The few functions of HarfBuzz (`libharfbuzz.so.0`) Sanad calls to shape text for its PDFs: a face and a font
/// from a font file's bytes, a buffer with direction, script and language, `hb_shape`, and the glyphs with their
/// positions. Found with dlopen through `NativeLibrary`, declared here from the documented C API (no header is used).
///
/// The library is proved to shape before it is called usable: `load` shapes two letters with HarfBuzz's empty font
/// and expects two glyphs back. HarfBuzz has no CPU-specific kernels (the reason libllama and OpenBLAS are probed
/// in a child process), so the check runs in this process.
public final class HarfBuzzLibrary: @unchecked Sendable {  // immutable after init: C function pointers only
    typealias BlobCreate =
        @convention(c) (UnsafePointer<CChar>?, UInt32, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) ->
        OpaquePointer?
    typealias Destroy = @convention(c) (OpaquePointer?) -> Void
    typealias FaceCreate = @convention(c) (OpaquePointer?, UInt32) -> OpaquePointer?
    typealias FaceUpem = @convention(c) (OpaquePointer?) -> UInt32
    typealias FontCreate = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias FontEmpty = @convention(c) () -> OpaquePointer?
    typealias FontAdvance = @convention(c) (OpaquePointer?, UInt32) -> Int32
    typealias BufferCreate = @convention(c) () -> OpaquePointer?
    typealias BufferAddUTF32 = @convention(c) (OpaquePointer?, UnsafePointer<UInt32>?, Int32, UInt32, Int32) -> Void
    typealias BufferSetDirection = @convention(c) (OpaquePointer?, UInt32) -> Void
    typealias BufferSetLanguage = @convention(c) (OpaquePointer?, OpaquePointer?) -> Void
    typealias BufferGuess = @convention(c) (OpaquePointer?) -> Void
    typealias LanguageFromString = @convention(c) (UnsafePointer<CChar>?, Int32) -> OpaquePointer?
    typealias Shape = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, UInt32) -> Void
    typealias GlyphArray = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt32>?) -> UnsafeRawPointer?
    typealias FaceReferenceBlob = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias BlobGetData = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt32>?) -> UnsafePointer<CChar>?
    typealias SetAdd = @convention(c) (OpaquePointer?, UInt32) -> Void
    typealias Version = @convention(c) () -> UnsafePointer<CChar>?

    let blobCreate: BlobCreate
    let blobDestroy: Destroy
    let blobGetData: BlobGetData
    let faceCreate: FaceCreate
    let faceDestroy: Destroy
    let faceUpem: FaceUpem
    let faceReferenceBlob: FaceReferenceBlob
    let fontCreate: FontCreate
    let fontDestroy: Destroy
    let fontAdvance: FontAdvance
    let bufferCreate: BufferCreate
    let bufferDestroy: Destroy
    let bufferAddUTF32: BufferAddUTF32
    let bufferSetDirection: BufferSetDirection
    let bufferSetLanguage: BufferSetLanguage
    let bufferGuess: BufferGuess
    let languageFromString: LanguageFromString
    let shape: Shape
    let glyphInfos: GlyphArray
    let glyphPositions: GlyphArray
    let setAdd: SetAdd
    /// `6.0.0`.
    public let version: String
    /// The library file, with where it was found.
    public let path: String

    static let spec = NativeLibrarySpec(
        displayName: "HarfBuzz", environmentVariable: "SANAD_HARFBUZZ", systemNames: ["libharfbuzz.so.0"],
        installHint:
            "apt-get install libharfbuzz0b (scripts/setup installs it), or set SANAD_HARFBUZZ to the library file"
    )

    init(_ lib: NativeLibrary) throws {
        blobCreate = try lib.require("hb_blob_create", as: BlobCreate.self)
        blobDestroy = try lib.require("hb_blob_destroy", as: Destroy.self)
        blobGetData = try lib.require("hb_blob_get_data", as: BlobGetData.self)
        faceCreate = try lib.require("hb_face_create", as: FaceCreate.self)
        faceDestroy = try lib.require("hb_face_destroy", as: Destroy.self)
        faceUpem = try lib.require("hb_face_get_upem", as: FaceUpem.self)
        faceReferenceBlob = try lib.require("hb_face_reference_blob", as: FaceReferenceBlob.self)
        fontCreate = try lib.require("hb_font_create", as: FontCreate.self)
        fontDestroy = try lib.require("hb_font_destroy", as: Destroy.self)
        fontAdvance = try lib.require("hb_font_get_glyph_h_advance", as: FontAdvance.self)
        bufferCreate = try lib.require("hb_buffer_create", as: BufferCreate.self)
        bufferDestroy = try lib.require("hb_buffer_destroy", as: Destroy.self)
        bufferAddUTF32 = try lib.require("hb_buffer_add_utf32", as: BufferAddUTF32.self)
        bufferSetDirection = try lib.require("hb_buffer_set_direction", as: BufferSetDirection.self)
        bufferSetLanguage = try lib.require("hb_buffer_set_language", as: BufferSetLanguage.self)
        bufferGuess = try lib.require("hb_buffer_guess_segment_properties", as: BufferGuess.self)
        languageFromString = try lib.require("hb_language_from_string", as: LanguageFromString.self)
        shape = try lib.require("hb_shape", as: Shape.self)
        glyphInfos = try lib.require("hb_buffer_get_glyph_infos", as: GlyphArray.self)
        glyphPositions = try lib.require("hb_buffer_get_glyph_positions", as: GlyphArray.self)
        setAdd = try lib.require("hb_set_add", as: SetAdd.self)
        let libversion = try lib.require("hb_version_string", as: Version.self)
        version = libversion().map { String(cString: $0) } ?? "?"
        path = lib.shownPath
        let empty = try lib.require("hb_font_get_empty", as: FontEmpty.self)
        let glyphs = shapeGlyphs(font: empty(), text: [0x61, 0x62], rightToLeft: false, language: "en")
        guard glyphs.count == 2 else {
            throw NativeLibraryError("\(path) shaped 'ab' into \(glyphs.count) glyph(s), not 2: it does not compute")
        }
    }

    /// The system HarfBuzz (or the file `SANAD_HARFBUZZ` names), proved to shape, or why it cannot be used.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) -> Result<
        HarfBuzzLibrary, NativeLibraryError
    > {
        NativeLibrary.load(spec, environment: environment) { lib in
            Result { try HarfBuzzLibrary(lib) }.mapError { NativeLibraryError("\($0)") }
        }
    }

    /// `text` (Unicode scalars) shaped with `font` in one direction; the glyphs in visual order (left to right).
    func shapeGlyphs(font: OpaquePointer?, text: [UInt32], rightToLeft: Bool, language: String) -> [ShapedGlyph] {
        guard let buffer = bufferCreate() else { return [] }
        defer { bufferDestroy(buffer) }
        text.withUnsafeBufferPointer { bufferAddUTF32(buffer, $0.baseAddress, Int32($0.count), 0, Int32($0.count)) }
        bufferSetDirection(buffer, rightToLeft ? 5 : 4)  // HB_DIRECTION_RTL, HB_DIRECTION_LTR
        bufferSetLanguage(buffer, languageFromString(language, -1))
        bufferGuess(buffer)  // the script, from the text
        shape(font, buffer, nil, 0)
        var count: UInt32 = 0
        guard let infos = glyphInfos(buffer, &count), let positions = glyphPositions(buffer, nil) else { return [] }
        // hb_glyph_info_t: codepoint, mask, cluster, two private words (20 bytes); hb_glyph_position_t: x_advance,
        // y_advance, x_offset, y_offset, one private word (20 bytes).
        return (0..<Int(count)).map { i in
            let info = infos.advanced(by: i * 20)
            let position = positions.advanced(by: i * 20)
            return ShapedGlyph(
                glyph: info.loadUnaligned(fromByteOffset: 0, as: UInt32.self),
                cluster: Int(info.loadUnaligned(fromByteOffset: 8, as: UInt32.self)),
                xAdvance: position.loadUnaligned(fromByteOffset: 0, as: Int32.self),
                xOffset: position.loadUnaligned(fromByteOffset: 8, as: Int32.self),
                yOffset: position.loadUnaligned(fromByteOffset: 12, as: Int32.self))
        }
    }

    /// The bytes of `blob`.
    func bytes(of blob: OpaquePointer?) -> [UInt8] {
        var length: UInt32 = 0
        guard let data = blobGetData(blob, &length), length > 0 else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }
}

/// One glyph of shaped text, in the font's units: its id, the index of the first Unicode scalar of the text it
/// shows (its cluster), how far it moves the pen, and where it sits relative to the pen.
public struct ShapedGlyph: Sendable, Equatable {
    public var glyph: UInt32
    public var cluster: Int
    public var xAdvance: Int32
    public var xOffset: Int32
    public var yOffset: Int32
}

/// A font file opened with HarfBuzz: shapes text, and gives each glyph's advance.
public final class HarfBuzzFont: @unchecked Sendable {  // HarfBuzz fonts are safe to shape with from any thread
    public let library: HarfBuzzLibrary
    let face: OpaquePointer
    let font: OpaquePointer
    /// Font units per em (2048 for DejaVu Sans).
    public let unitsPerEm: Int

    /// Opens the font in `bytes` (a TrueType file); `name` is for the error.
    public init(library: HarfBuzzLibrary, bytes: [UInt8], name: String) throws {
        self.library = library
        let blob = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                library.blobCreate($0.baseAddress, UInt32($0.count), 0, nil, nil)  // HB_MEMORY_MODE_DUPLICATE
            }
        }
        defer { library.blobDestroy(blob) }
        guard let face = library.faceCreate(blob, 0), library.faceUpem(face) > 16,
            let font = library.fontCreate(face)
        else { throw NativeLibraryError("\(name): HarfBuzz cannot read it as a font") }
        self.face = face
        self.font = font
        unitsPerEm = Int(library.faceUpem(face))
    }

    deinit {
        library.fontDestroy(font)
        library.faceDestroy(face)
    }

    /// `text` (Unicode scalars) shaped in one direction, in `language` (a BCP 47 tag: `ar`, `en`); the glyphs in
    /// visual order, left to right, clusters indexing `text`.
    public func shape(_ text: [UInt32], rightToLeft: Bool, language: String) -> [ShapedGlyph] {
        library.shapeGlyphs(font: font, text: text, rightToLeft: rightToLeft, language: language)
    }

    /// The glyph's advance in font units (its `hmtx` width).
    public func advance(_ glyph: UInt32) -> Int { Int(library.fontAdvance(font, glyph)) }
}

/// HarfBuzz's subsetter (`libharfbuzz-subset.so.0`): a font cut down to the glyphs a document uses, glyph ids kept.
public final class HarfBuzzSubsetter: @unchecked Sendable {  // immutable after init: C function pointers only
    typealias InputCreate = @convention(c) () -> OpaquePointer?
    typealias InputSet = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias InputSetFlags = @convention(c) (OpaquePointer?, UInt32) -> Void
    typealias InputSetKind = @convention(c) (OpaquePointer?, UInt32) -> OpaquePointer?
    typealias SubsetOrFail = @convention(c) (OpaquePointer?, OpaquePointer?) -> OpaquePointer?
    typealias Destroy = @convention(c) (OpaquePointer?) -> Void

    let inputCreate: InputCreate
    let inputDestroy: Destroy
    let glyphSet: InputSet
    let unicodeSet: InputSet
    let inputSet: InputSetKind
    let setFlags: InputSetFlags
    let subsetOrFail: SubsetOrFail
    public let path: String

    static let spec = NativeLibrarySpec(
        displayName: "HarfBuzz subsetter", environmentVariable: "SANAD_HARFBUZZ_SUBSET",
        systemNames: ["libharfbuzz-subset.so.0"],
        installHint:
            "apt-get install libharfbuzz-subset0 (scripts/setup installs it), or set SANAD_HARFBUZZ_SUBSET to the library file"
    )

    init(_ lib: NativeLibrary) throws {
        inputCreate = try lib.require("hb_subset_input_create_or_fail", as: InputCreate.self)
        inputDestroy = try lib.require("hb_subset_input_destroy", as: Destroy.self)
        glyphSet = try lib.require("hb_subset_input_glyph_set", as: InputSet.self)
        unicodeSet = try lib.require("hb_subset_input_unicode_set", as: InputSet.self)
        inputSet = try lib.require("hb_subset_input_set", as: InputSetKind.self)
        setFlags = try lib.require("hb_subset_input_set_flags", as: InputSetFlags.self)
        subsetOrFail = try lib.require("hb_subset_or_fail", as: SubsetOrFail.self)
        path = lib.shownPath
    }

    /// The system subsetter (or the file `SANAD_HARFBUZZ_SUBSET` names), or why it cannot be used.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) -> Result<
        HarfBuzzSubsetter, NativeLibraryError
    > {
        NativeLibrary.load(spec, environment: environment) { lib in
            Result { try HarfBuzzSubsetter(lib) }.mapError { NativeLibraryError("\($0)") }
        }
    }

    /// The TrueType file of `font` cut down to `glyphs` (and the glyphs of `unicodes`, so its `cmap` stays
    /// meaningful), every glyph keeping its id (`HB_SUBSET_FLAGS_RETAIN_GIDS`), without the layout tables (GSUB,
    /// GPOS, GDEF, kern); `name` is for the error.
    public func subset(_ font: HarfBuzzFont, glyphs: Set<UInt32>, unicodes: Set<UInt32>, name: String) throws
        -> [UInt8]
    {
        let hb = font.library
        guard let input = inputCreate() else { throw NativeLibraryError("\(name): HarfBuzz could not start a subset") }
        defer { inputDestroy(input) }
        for g in glyphs.union([0]) { hb.setAdd(glyphSet(input), g) }
        for u in unicodes { hb.setAdd(unicodeSet(input), u) }
        // A PDF draws glyphs already shaped: the layout tables are not needed (HB_SUBSET_SETS_DROP_TABLE_TAG).
        for tag in ["GSUB", "GPOS", "GDEF", "kern"] {
            hb.setAdd(inputSet(input, 3), tag.utf8.reduce(0) { $0 << 8 | UInt32($1) })
        }
        setFlags(input, 0x2)  // HB_SUBSET_FLAGS_RETAIN_GIDS
        guard let subset = subsetOrFail(font.face, input) else {
            throw NativeLibraryError("\(name): HarfBuzz could not subset it")
        }
        defer { hb.faceDestroy(subset) }
        let blob = hb.faceReferenceBlob(subset)
        defer { hb.blobDestroy(blob) }
        let bytes = hb.bytes(of: blob)
        guard !bytes.isEmpty else { throw NativeLibraryError("\(name): HarfBuzz made an empty subset") }
        return bytes
    }
}
