"""One line for a `gridforge validate` of images (raymarch runs, in-situ frames):
pass or FAIL, the lowest PSNR and the most pixels off, from its validation.json.
Used by tests/gpu/run_on_gpu.sh and tests/gpu/rm_gpu.sh.

    python3 tests/gpu/validate_summary.py VALIDATION_JSON LABEL
"""
import json
import sys


def main(path, label):
    try:
        with open(path) as f:
            j = json.load(f)
    except Exception as e:  # a validate that wrote nothing: say so, don't stop the script
        print(f"validate {label}: no validation.json ({e})")
        return
    imgs = [r for r in j["rows"] if "psnr_db" in r]
    worst = (min((r["psnr_db"] if r["psnr_db"] is not None else float("inf")) for r in imgs)
             if imgs else None)
    off = max((r["off_fraction"] for r in imgs), default=0)
    w = "identical" if worst == float("inf") else (None if worst is None else f"{worst:.2f} dB")
    print(f"validate {label}: {'pass' if j['pass'] else 'FAIL'}; {len(imgs)} image(s), "
          f"lowest PSNR {w}, most pixels off {100 * off:.3f} %")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
