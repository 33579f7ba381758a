/*
 * A stand-in for Windows' bcryptprimitives.dll, for running the Windows test binaries under
 * Wine 8.0 (Debian 12's wine64) only. NEVER SHIP IT: it is a test fixture, built into
 * target/wine/ by scripts/lib.sh (ensure_wine_prng) and copied into the tests' own Wine prefix,
 * never into src-tauri's bundle or any release artifact.
 *
 * Why: Rust's standard library takes its random bytes (HashMap keys, among others) from
 * ProcessPrng in bcryptprimitives.dll, which every Windows since 10 has and Wine 8.0 lacks, so
 * every Rust program stops before main with STATUS_DLL_NOT_FOUND (c0000135). This exports the
 * one function std imports, with its documented signature, on top of RtlGenRandom (advapi32's
 * SystemFunction036), which Wine has and which draws from the same system source.
 */
#include <windows.h>

/* RtlGenRandom: declared here rather than through ntsecapi.h, whose macro renames it. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* The real one never fails; this one fails only if RtlGenRandom does. RtlGenRandom takes a ULONG
 * length, so larger requests are filled a chunk at a time. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
