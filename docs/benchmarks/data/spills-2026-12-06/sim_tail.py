# List-scheduling simulation of the sm_80 grid on global tokens + window (heavy-first per batch vs. the heaviest
# block of every batch first): makespan in tile-steps a slot, a = fixed cost per block in tile-steps. Run: python3 sim_tail.py
import heapq, math
def tiles_gw(N, bm=128, bn=64, glob=64, W=256):
    QB=N//bm; KB=N//bn; out=[]
    for m in range(QB):
        q0,q1=m*bm, m*bm+bm-1
        if q0<glob: out.append(KB); continue
        ks=set(range(0,(glob-1)//bn+1))
        for k in range(max(0,(q0-W)//bn), q1//bn+1): ks.add(k)
        out.append(len(ks))
    return out
def sim(order, dur, slots):
    h=[0.0]*slots; heapq.heapify(h); end=0
    for it in order:
        t=heapq.heappop(h); t+=dur[it]; end=max(end,t); heapq.heappush(h,t)
    return end
def run(N,B,H,slots=264,a=2.0,b=1.0):
    t=tiles_gw(N); QB=len(t)
    rank=sorted(range(QB), key=lambda m:-t[m])
    dur={}
    for bb in range(B):
        for hh in range(H):
            for r in range(QB): dur[(bb,hh,r)]=a+b*t[rank[r]]
    per_batch=[(bb,hh,r) for bb in range(B) for r in range(QB) for hh in range(H)]
    cross=[(bb,hh,0) for bb in range(B) for hh in range(H)]+[(bb,hh,r) for bb in range(B) for r in range(1,QB) for hh in range(H)]
    dense=sum(a+b*len(t)*0+b*(N//64) for _ in range(B*H*QB))/slots
    total=sum(dur.values())/slots
    print(N,B,H,"ideal",round(total,1),"per_batch",round(sim(per_batch,dur,slots),1),"cross0",round(sim(cross,dur,slots),1),"dense ideal",round(dense,1), "pred", round(sum(N//64 for _ in t)/sum(t),2))
for cfg in [(8192,2,32),(8192,2,64),(8192,2,128),(2048,8,32),(2048,8,64),(2048,8,128)]:
    run(*cfg)
