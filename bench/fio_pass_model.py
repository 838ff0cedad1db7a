"""Where a pass of cmdprio-bssplit.fio's first job ends, by fio's rules
with uniform draws (see compare_fio_jobs.py's CAUSES): randrw 50/50,
reads bssplit 64k/40:1m/60 on a 64 KiB-bit map (cut at done blocks),
1 MiB writes drawn in 0..63 that check and mark one bit (min_bs[WRITE]),
the next free bit past a busy one (wrapping), a write past bit 63 lands
past the 64 MiB file and ends the pass. Prints the median, least and
largest I/O count over 200 seeds and the ten smallest.

usage: python3 bench/fio_pass_model.py
"""
import random
import statistics


def one(seed):
    """I/Os until the pass ends or 64 MiB are done."""
    R=random.Random(seed); n=1024; bits=[False]*n; done=0; ios=0; limit=64<<20
    def nf(b):
        for i in range(b, n):
            if not bits[i]: return i
        for i in range(0, n):
            if not bits[i]: return i
        return None
    while done < limit:
        read = R.random() < 0.5
        if read:
            b=int(1024*R.random()); 
            if bits[b]: b=nf(b)
            if b is None: break
            L = 1 if R.random()<0.4 else 16
            L=min(L, n-b)  # fits
            k=0
            while k<L and not bits[b+k]: bits[b+k]=True; k+=1
            done += k*65536
        else:
            b=int(64*R.random())
            if bits[b]: b=nf(b)
            if b is None or b>=64: break
            bits[b]=True
            done += 1<<20
        ios+=1
    return ios


r = [one(s) for s in range(200)]
print(statistics.median(r), min(r), max(r), sorted(r)[:10])
