import re, sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
pat = re.compile(r"^(\s*)(scores\[.+?\](?:\[\w+\])*) = MASK \? \((.+) \? (.+) : (-INFINITY)\) : (.+);$", re.M)
def rep(m):
    ind, x, c, v, f, v2 = m.groups()
    if v != v2:
        return m.group(0)
    return f"{ind}{x} = {v};\n{ind}if (MASK && !({c})) {x} = {f};"
s2, n = pat.subn(rep, s)
print("replaced", n)
open(dst, 'w').write(s2)
