; loop-extract crashes (SIGSEGV in llvm::LoopInfo::erase) on its second run in
; `loop-extract,function(instcombine<no-verify-fixpoint>,simplifycfg),loop-extract`, on
; LLVM 19 and 22: csmith --seed 2646955483 (13,600 lines of IR), compiled with
; `clang-19 -O0 -Xclang -disable-O0-optnone -emit-llvm -S`, then cut by llvm-reduce-19
; (`--delta-passes=functions,function-bodies,global-variables`) to one function, keeping
; that both LLVMs crash with the whole sequence and with neither `-opt-bisect-limit=1`
; nor `loop-extract` alone. The bug-folder tests reduce it further; the full csmith
; program's reduction is `cargo bench --bench reduce`.
source_filename = "loop-extract-crash.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%union.U0 = type { i32 }

@g_26 = internal global i32 329505733, align 4
@g_79 = internal global i8 -1, align 1
@g_153 = internal global i32 -37897562, align 4
@g_267 = internal global i16 -1, align 2
@g_295 = internal global i32 1597704900, align 4
@g_305 = internal global i32 -514589224, align 4
@g_401 = internal global i8 -1, align 1
@g_1134 = internal global i32 140234474, align 4
@g_1586 = internal global i8 84, align 1
@g_1054 = internal global ptr null, align 8
@g_608 = internal global ptr @g_295, align 8
@g_362 = internal global ptr getelementptr (i8, ptr null, i64 8), align 8
@g_361 = internal global ptr @g_362, align 8
@__const.func_14.l_1135 = private unnamed_addr constant [10 x i32] [i32 4, i32 406382364, i32 -2081440752, i32 406382364, i32 4, i32 4, i32 406382364, i32 -2081440752, i32 406382364, i32 4], align 16
@__const.func_14.l_1136 = private unnamed_addr constant [8 x [3 x i32]] [[3 x i32] [i32 8, i32 5, i32 0], [3 x i32] [i32 8, i32 8, i32 5], [3 x i32] [i32 0, i32 5, i32 5], [3 x i32] [i32 5, i32 1, i32 0], [3 x i32] [i32 0, i32 1, i32 0], [3 x i32] [i32 8, i32 5, i32 0], [3 x i32] [i32 8, i32 8, i32 5], [3 x i32] [i32 0, i32 5, i32 5]], align 16
@__const.func_14.l_1544 = private unnamed_addr constant [6 x i32] [i32 523610860, i32 523610860, i32 523610860, i32 523610860, i32 523610860, i32 523610860], align 16

; Function Attrs: nocallback nofree nounwind willreturn memory(argmem: readwrite)
declare void @llvm.memcpy.p0.p0.i64(ptr noalias nocapture writeonly, ptr noalias nocapture readonly, i64, i1 immarg) #0

; Function Attrs: noinline nounwind uwtable
define internal ptr @func_14(ptr noundef %0, i32 noundef %1) #1 {
  %3 = alloca ptr, align 8
  %4 = alloca ptr, align 8
  %5 = alloca i32, align 4
  %6 = alloca [10 x i32], align 16
  %7 = alloca [8 x [3 x i32]], align 16
  %8 = alloca ptr, align 8
  %9 = alloca [8 x [6 x [5 x i64]]], align 16
  %10 = alloca i32, align 4
  %11 = alloca ptr, align 8
  %12 = alloca [7 x [1 x [1 x ptr]]], align 16
  %13 = alloca i32, align 4
  %14 = alloca i16, align 2
  %15 = alloca ptr, align 8
  %16 = alloca ptr, align 8
  %17 = alloca ptr, align 8
  %18 = alloca [7 x i32], align 16
  %19 = alloca i64, align 8
  %20 = alloca ptr, align 8
  %21 = alloca ptr, align 8
  %22 = alloca [6 x i32], align 16
  %23 = alloca i32, align 4
  %24 = alloca i8, align 1
  %25 = alloca ptr, align 8
  %26 = alloca ptr, align 8
  %27 = alloca ptr, align 8
  %28 = alloca i16, align 2
  %29 = alloca i32, align 4
  %30 = alloca ptr, align 8
  %31 = alloca [7 x [7 x [2 x i32]]], align 16
  %32 = alloca [8 x [6 x [5 x i8]]], align 16
  %33 = alloca i8, align 1
  %34 = alloca i16, align 2
  %35 = alloca ptr, align 8
  %36 = alloca ptr, align 8
  %37 = alloca i32, align 4
  %38 = alloca i32, align 4
  %39 = alloca i32, align 4
  %40 = alloca i16, align 2
  %41 = alloca [2 x i32], align 4
  %42 = alloca ptr, align 8
  %43 = alloca [10 x ptr], align 16
  %44 = alloca ptr, align 8
  %45 = alloca ptr, align 8
  %46 = alloca [6 x [5 x [1 x i64]]], align 16
  %47 = alloca i16, align 2
  %48 = alloca ptr, align 8
  %49 = alloca i64, align 8
  %50 = alloca i64, align 8
  %51 = alloca i16, align 2
  %52 = alloca ptr, align 8
  %53 = alloca i32, align 4
  %54 = alloca i32, align 4
  %55 = alloca i32, align 4
  %56 = alloca i32, align 4
  %57 = alloca i32, align 4
  %58 = alloca i32, align 4
  %59 = alloca i32, align 4
  %60 = alloca ptr, align 8
  %61 = alloca i32, align 4
  %62 = alloca i32, align 4
  %63 = alloca i32, align 4
  %64 = alloca i32, align 4
  %65 = alloca i32, align 4
  %66 = alloca i8, align 1
  %67 = alloca i32, align 4
  %68 = alloca i32, align 4
  %69 = alloca i32, align 4
  %70 = alloca ptr, align 8
  %71 = alloca i32, align 4
  %72 = alloca i32, align 4
  %73 = alloca [5 x [10 x [2 x i32]]], align 16
  %74 = alloca ptr, align 8
  %75 = alloca i16, align 2
  %76 = alloca i32, align 4
  %77 = alloca ptr, align 8
  %78 = alloca ptr, align 8
  %79 = alloca i32, align 4
  %80 = alloca i32, align 4
  %81 = alloca i32, align 4
  %82 = alloca ptr, align 8
  %83 = alloca ptr, align 8
  %84 = alloca i32, align 4
  %85 = alloca ptr, align 8
  %86 = alloca ptr, align 8
  %87 = alloca ptr, align 8
  %88 = alloca ptr, align 8
  %89 = alloca i32, align 4
  %90 = alloca i64, align 8
  %91 = alloca i32, align 4
  %92 = alloca [2 x [8 x ptr]], align 16
  %93 = alloca i32, align 4
  %94 = alloca i32, align 4
  %95 = alloca ptr, align 8
  %96 = alloca ptr, align 8
  %97 = alloca i32, align 4
  %98 = alloca i32, align 4
  %99 = alloca i32, align 4
  %100 = alloca i32, align 4
  %101 = alloca i16, align 2
  %102 = alloca i32, align 4
  %103 = alloca i32, align 4
  %104 = alloca ptr, align 8
  %105 = alloca i32, align 4
  %106 = alloca [4 x i32], align 16
  %107 = alloca ptr, align 8
  %108 = alloca ptr, align 8
  %109 = alloca i32, align 4
  %110 = alloca ptr, align 8
  %111 = alloca i64, align 8
  %112 = alloca ptr, align 8
  %113 = alloca ptr, align 8
  %114 = alloca i32, align 4
  %115 = alloca [1 x i16], align 2
  %116 = alloca i32, align 4
  %117 = alloca ptr, align 8
  %118 = alloca ptr, align 8
  %119 = alloca ptr, align 8
  %120 = alloca ptr, align 8
  %121 = alloca ptr, align 8
  %122 = alloca ptr, align 8
  %123 = alloca ptr, align 8
  %124 = alloca ptr, align 8
  %125 = alloca [1 x [10 x ptr]], align 16
  %126 = alloca i32, align 4
  %127 = alloca i32, align 4
  %128 = alloca ptr, align 8
  %129 = alloca ptr, align 8
  %130 = alloca ptr, align 8
  %131 = alloca ptr, align 8
  %132 = alloca i32, align 4
  %133 = alloca i32, align 4
  %134 = alloca i32, align 4
  store ptr %0, ptr %4, align 8
  store i32 %1, ptr %5, align 4
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %6, ptr align 16 @__const.func_14.l_1135, i64 40, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %7, ptr align 16 @__const.func_14.l_1136, i64 96, i1 false)
  store ptr getelementptr inbounds ([2 x i64], ptr getelementptr inbounds ([10 x [2 x i64]], ptr getelementptr inbounds ([10 x [10 x [2 x i64]]], ptr null, i64 0, i64 6), i64 0, i64 6), i64 0, i64 1), ptr %8, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %9, ptr align 16 null, i64 1920, i1 false)
  store i32 1917144155, ptr %10, align 4
  store ptr getelementptr inbounds ([5 x ptr], ptr getelementptr inbounds ([2 x [5 x ptr]], ptr getelementptr inbounds ([7 x [2 x [5 x ptr]]], ptr null, i64 0, i64 4), i64 0, i64 1), i64 0, i64 1), ptr %11, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %12, ptr align 16 null, i64 56, i1 false)
  store i32 1913135834, ptr %13, align 4
  store i16 12757, ptr %14, align 2
  store ptr @g_1134, ptr %15, align 8
  store ptr null, ptr %16, align 8
  store ptr getelementptr inbounds ([8 x [1 x ptr]], ptr getelementptr inbounds ([2 x [8 x [1 x ptr]]], ptr null, i64 0, i64 1), i64 0, i64 6), ptr %17, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %18, ptr align 16 null, i64 28, i1 false)
  store i64 -1, ptr %19, align 8
  store ptr @g_79, ptr %20, align 8
  store ptr %20, ptr %21, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %22, ptr align 16 @__const.func_14.l_1544, i64 24, i1 false)
  store i32 -1728282780, ptr %23, align 4
  store i8 55, ptr %24, align 1
  store ptr null, ptr %25, align 8
  store ptr %25, ptr %26, align 8
  store ptr null, ptr %27, align 8
  store i16 1299, ptr %28, align 2
  store i32 -4, ptr %29, align 4
  store ptr @g_608, ptr %30, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %31, ptr align 16 null, i64 392, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %32, ptr align 16 null, i64 240, i1 false)
  store i8 -5, ptr %33, align 1
  store i16 -5, ptr %34, align 2
  store ptr null, ptr %35, align 8
  store ptr @g_401, ptr %36, align 8
  store i8 0, ptr @g_401, align 1
  br label %135

135:                                              ; preds = %177, %2
  %136 = load i8, ptr @g_401, align 1
  %137 = zext i8 %136 to i32
  %138 = icmp ne i32 %137, 14
  br i1 %138, label %139, label %180

139:                                              ; preds = %135
  store i16 -30940, ptr %40, align 2
  store ptr null, ptr %42, align 8
  %140 = getelementptr inbounds [8 x [3 x i32]], ptr %7, i64 0, i64 2
  %141 = getelementptr inbounds [3 x i32], ptr %140, i64 0, i64 2
  store ptr %141, ptr %43, align 8
  %142 = getelementptr inbounds ptr, ptr %43, i64 1
  %143 = getelementptr inbounds [2 x i32], ptr %41, i64 0, i64 1
  store ptr %143, ptr %142, align 8
  %144 = getelementptr inbounds ptr, ptr %43, i64 2
  %145 = getelementptr inbounds [8 x [3 x i32]], ptr %7, i64 0, i64 2
  %146 = getelementptr inbounds [3 x i32], ptr %145, i64 0, i64 2
  store ptr %146, ptr %144, align 8
  %147 = getelementptr inbounds ptr, ptr %43, i64 3
  %148 = getelementptr inbounds [8 x [3 x i32]], ptr %7, i64 0, i64 2
  %149 = getelementptr inbounds [3 x i32], ptr %148, i64 0, i64 2
  store ptr %149, ptr %147, align 8
  %150 = getelementptr inbounds ptr, ptr %43, i64 4
  %151 = getelementptr inbounds [2 x i32], ptr %41, i64 0, i64 1
  store ptr %151, ptr %150, align 8
  %152 = getelementptr inbounds ptr, ptr %43, i64 5
  %153 = getelementptr inbounds [8 x [3 x i32]], ptr %7, i64 0, i64 2
  %154 = getelementptr inbounds [3 x i32], ptr %153, i64 0, i64 2
  store ptr %154, ptr %152, align 8
  %155 = getelementptr inbounds ptr, ptr %43, i64 6
  %156 = getelementptr inbounds [8 x [3 x i32]], ptr %7, i64 0, i64 2
  %157 = getelementptr inbounds [3 x i32], ptr %156, i64 0, i64 2
  store ptr %157, ptr %155, align 8
  %158 = getelementptr inbounds ptr, ptr %43, i64 7
  %159 = getelementptr inbounds [2 x i32], ptr %41, i64 0, i64 1
  store ptr %159, ptr %158, align 8
  %160 = getelementptr inbounds ptr, ptr %43, i64 8
  %161 = getelementptr inbounds [8 x [3 x i32]], ptr %7, i64 0, i64 2
  %162 = getelementptr inbounds [3 x i32], ptr %161, i64 0, i64 2
  store ptr %162, ptr %160, align 8
  %163 = getelementptr inbounds ptr, ptr %43, i64 9
  %164 = getelementptr inbounds [8 x [3 x i32]], ptr %7, i64 0, i64 2
  %165 = getelementptr inbounds [3 x i32], ptr %164, i64 0, i64 2
  store ptr %165, ptr %163, align 8
  store ptr null, ptr %44, align 8
  store ptr null, ptr %45, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %46, ptr align 16 null, i64 240, i1 false)
  store i16 -15869, ptr %47, align 2
  store ptr null, ptr %48, align 8
  store i64 0, ptr %49, align 8
  store i64 -1, ptr %50, align 8
  store i16 0, ptr %51, align 2
  store ptr null, ptr %52, align 8
  store i32 0, ptr %53, align 4
  br label %166

166:                                              ; preds = %173, %139
  %167 = load i32, ptr %53, align 4
  %168 = icmp slt i32 %167, 2
  br i1 %168, label %169, label %176

169:                                              ; preds = %166
  %170 = load i32, ptr %53, align 4
  %171 = sext i32 %170 to i64
  %172 = getelementptr inbounds [2 x i32], ptr %41, i64 0, i64 %171
  store i32 -1, ptr %172, align 4
  br label %173

173:                                              ; preds = %169
  %174 = load i32, ptr %53, align 4
  %175 = add nsw i32 %174, 1
  store i32 %175, ptr %53, align 4
  br label %166, !llvm.loop !6

176:                                              ; preds = %166
  br label %177

177:                                              ; preds = %176
  %178 = load i8, ptr @g_401, align 1
  %179 = add i8 %178, 1
  store i8 %179, ptr @g_401, align 1
  br label %135, !llvm.loop !8

180:                                              ; preds = %135
  store i8 12, ptr @g_79, align 1
  br label %181

181:                                              ; preds = %610, %180
  %182 = load i8, ptr @g_79, align 1
  %183 = sext i8 %182 to i32
  %184 = icmp sge i32 %183, 1
  br i1 %184, label %185, label %613

185:                                              ; preds = %181
  store i32 -1, ptr %56, align 4
  store i32 238552665, ptr %57, align 4
  store i32 -1453113380, ptr %58, align 4
  store i32 0, ptr %59, align 4
  store ptr @g_362, ptr %60, align 8
  store i32 -4, ptr %61, align 4
  store i32 1355179954, ptr %62, align 4
  store i32 0, ptr %63, align 4
  store i32 1503322131, ptr %64, align 4
  store i32 1854942267, ptr %65, align 4
  store i8 -32, ptr %66, align 1
  store i32 1864030890, ptr %67, align 4
  store i32 1817393079, ptr %68, align 4
  store i32 2, ptr %69, align 4
  store ptr @g_295, ptr %70, align 8
  store i32 301814601, ptr %71, align 4
  store i32 -566370528, ptr %72, align 4
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %73, ptr align 16 null, i64 400, i1 false)
  store ptr getelementptr inbounds ([6 x ptr], ptr null, i64 0, i64 5), ptr %74, align 8
  store i16 -10, ptr %75, align 2
  store i32 8, ptr %76, align 4
  store ptr null, ptr %77, align 8
  store ptr getelementptr inbounds ([5 x ptr], ptr getelementptr inbounds ([7 x [2 x [5 x ptr]]], ptr null, i64 0, i64 2), i64 0, i64 2), ptr %78, align 8
  store i32 -12, ptr @g_295, align 4
  br label %186

186:                                              ; preds = %421, %185
  %187 = load i32, ptr @g_295, align 4
  %188 = icmp uge i32 %187, 17
  br i1 %188, label %189, label %426

189:                                              ; preds = %186
  store ptr null, ptr %82, align 8
  store ptr getelementptr inbounds ([9 x [3 x i64]], ptr getelementptr inbounds ([6 x [9 x [3 x i64]]], ptr null, i64 0, i64 2), i64 0, i64 2), ptr %83, align 8
  store i32 -1773952294, ptr %84, align 4
  %190 = getelementptr inbounds [10 x i32], ptr %6, i64 0, i64 2
  store ptr %190, ptr %85, align 8
  store ptr null, ptr %86, align 8
  store ptr null, ptr %87, align 8
  store ptr @g_401, ptr %88, align 8
  store i32 1, ptr %89, align 4
  store i64 4207621074938613046, ptr %90, align 8
  store i32 1, ptr %91, align 4
  store i32 0, ptr %93, align 4
  br label %191

191:                                              ; preds = %209, %189
  %192 = load i32, ptr %93, align 4
  %193 = icmp slt i32 %192, 2
  br i1 %193, label %194, label %212

194:                                              ; preds = %191
  store i32 0, ptr %94, align 4
  br label %195

195:                                              ; preds = %205, %194
  %196 = load i32, ptr %94, align 4
  %197 = icmp slt i32 %196, 8
  br i1 %197, label %198, label %208

198:                                              ; preds = %195
  %199 = load i32, ptr %93, align 4
  %200 = sext i32 %199 to i64
  %201 = getelementptr inbounds [2 x [8 x ptr]], ptr %92, i64 0, i64 %200
  %202 = load i32, ptr %94, align 4
  %203 = sext i32 %202 to i64
  %204 = getelementptr inbounds [8 x ptr], ptr %201, i64 0, i64 %203
  store ptr %10, ptr %204, align 8
  br label %205

205:                                              ; preds = %198
  %206 = load i32, ptr %94, align 4
  %207 = add nsw i32 %206, 1
  store i32 %207, ptr %94, align 4
  br label %195, !llvm.loop !9

208:                                              ; preds = %195
  br label %209

209:                                              ; preds = %208
  %210 = load i32, ptr %93, align 4
  %211 = add nsw i32 %210, 1
  store i32 %211, ptr %93, align 4
  br label %191, !llvm.loop !10

212:                                              ; preds = %191
  store i32 0, ptr @g_305, align 4
  br label %213

213:                                              ; preds = %218, %212
  %214 = load i32, ptr @g_305, align 4
  %215 = icmp ule i32 %214, 2
  br i1 %215, label %216, label %221

216:                                              ; preds = %213
  store ptr null, ptr %95, align 8
  %217 = load ptr, ptr %95, align 8
  store ptr %217, ptr %3, align 8
  br label %616

218:                                              ; No predecessors!
  %219 = load i32, ptr @g_305, align 4
  %220 = add i32 %219, 1
  store i32 %220, ptr @g_305, align 4
  br label %213, !llvm.loop !11

221:                                              ; preds = %213
  %222 = load ptr, ptr %15, align 8
  %223 = load i32, ptr %222, align 4
  %224 = load volatile i32, ptr getelementptr inbounds ([6 x %union.U0], ptr getelementptr inbounds ([9 x [6 x %union.U0]], ptr getelementptr inbounds ([3 x [9 x [6 x %union.U0]]], ptr null, i64 0, i64 1), i64 0, i64 2), i64 0, i64 2), align 8
  %225 = sext i32 %224 to i64
  %226 = load ptr, ptr %83, align 8
  store i64 %225, ptr %226, align 8
  %227 = icmp ne i64 %225, 0
  br i1 %227, label %239, label %228

228:                                              ; preds = %221
  %229 = load i32, ptr %5, align 4
  %230 = trunc i32 %229 to i16
  %231 = load i32, ptr %84, align 4
  %232 = call zeroext i16 null(i16 noundef zeroext %230, i32 noundef %231)
  %233 = trunc i16 %232 to i8
  %234 = load i32, ptr %5, align 4
  %235 = trunc i32 %234 to i8
  %236 = call zeroext i8 @safe_div_func_uint8_t_u_u(i8 noundef zeroext %233, i8 noundef zeroext %235)
  %237 = zext i8 %236 to i32
  %238 = icmp ne i32 %237, 0
  br label %239

239:                                              ; preds = %228, %221
  %240 = phi i1 [ true, %221 ], [ %238, %228 ]
  %241 = zext i1 %240 to i32
  %242 = or i32 %223, %241
  %243 = or i32 %242, 1
  %244 = getelementptr inbounds [6 x i32], ptr %22, i64 0, i64 5
  %245 = load i32, ptr %244, align 4
  %246 = getelementptr inbounds [10 x i32], ptr %6, i64 0, i64 6
  store ptr %246, ptr %85, align 8
  %247 = icmp eq ptr %246, %84
  br i1 %247, label %252, label %248

248:                                              ; preds = %239
  %249 = load ptr, ptr @g_608, align 8
  %250 = load i32, ptr %249, align 4
  %251 = icmp ne i32 %250, 0
  br label %252

252:                                              ; preds = %248, %239
  %253 = phi i1 [ true, %239 ], [ %251, %248 ]
  %254 = zext i1 %253 to i32
  %255 = trunc i32 %254 to i8
  %256 = load i32, ptr %5, align 4
  %257 = call signext i8 @safe_lshift_func_int8_t_s_u(i8 noundef signext %255, i32 noundef %256)
  %258 = sext i8 %257 to i32
  %259 = load ptr, ptr @g_361, align 8
  %260 = load ptr, ptr %259, align 8
  %261 = load i8, ptr %260, align 1
  %262 = zext i8 %261 to i32
  %263 = xor i32 %258, %262
  %264 = call i32 @safe_div_func_uint32_t_u_u(i32 noundef %263, i32 noundef -485528831)
  %265 = trunc i32 %264 to i8
  %266 = load ptr, ptr %86, align 8
  store i8 %265, ptr %266, align 1
  %267 = sext i8 %265 to i64
  %268 = icmp slt i64 %267, 186
  %269 = zext i1 %268 to i32
  %270 = trunc i32 %269 to i16
  %271 = load i32, ptr %5, align 4
  %272 = call signext i16 @safe_rshift_func_int16_t_s_u(i16 noundef signext %270, i32 noundef %271)
  %273 = load ptr, ptr %85, align 8
  %274 = load i32, ptr %273, align 4
  %275 = sext i32 %274 to i64
  %276 = icmp sge i64 %275, 2515874909
  %277 = zext i1 %276 to i32
  %278 = load i16, ptr @g_267, align 2
  %279 = zext i16 %278 to i32
  %280 = or i32 %277, %279
  %281 = sext i32 %280 to i64
  %282 = and i64 %281, 0
  %283 = load ptr, ptr %4, align 8
  %284 = load i32, ptr %283, align 4
  %285 = sext i32 %284 to i64
  %286 = icmp eq i64 %282, %285
  %287 = zext i1 %286 to i32
  %288 = load i32, ptr %5, align 4
  %289 = icmp uge i32 %287, %288
  %290 = zext i1 %289 to i32
  %291 = trunc i32 %290 to i16
  %292 = call signext i16 @safe_div_func_int16_t_s_s(i16 noundef signext %291, i16 noundef signext 23701)
  %293 = sext i16 %292 to i64
  %294 = icmp uge i64 %293, -5617446207899000307
  %295 = zext i1 %294 to i32
  %296 = load ptr, ptr %88, align 8
  %297 = load i8, ptr %296, align 1
  %298 = zext i8 %297 to i32
  %299 = xor i32 %298, %295
  %300 = trunc i32 %299 to i8
  store i8 %300, ptr %296, align 1
  %301 = load ptr, ptr @g_361, align 8
  %302 = load ptr, ptr %301, align 8
  store i8 %300, ptr %302, align 1
  %303 = zext i8 %300 to i64
  %304 = xor i64 %303, 2
  %305 = icmp ne i64 %304, 0
  br i1 %305, label %310, label %306

306:                                              ; preds = %252
  %307 = load ptr, ptr %85, align 8
  %308 = load i32, ptr %307, align 4
  %309 = icmp ne i32 %308, 0
  br label %310

310:                                              ; preds = %306, %252
  %311 = phi i1 [ true, %252 ], [ %309, %306 ]
  %312 = zext i1 %311 to i32
  store i32 %312, ptr %89, align 4
  %313 = xor i32 %245, %312
  %314 = trunc i32 %313 to i8
  %315 = load i32, ptr getelementptr inbounds ([6 x i32], ptr null, i64 0, i64 1), align 4
  %316 = trunc i32 %315 to i8
  %317 = call zeroext i8 @safe_div_func_uint8_t_u_u(i8 noundef zeroext %314, i8 noundef zeroext %316)
  %318 = zext i8 %317 to i32
  %319 = load i32, ptr %84, align 4
  %320 = xor i32 %318, %319
  %321 = sext i32 %320 to i64
  %322 = call i64 @safe_sub_func_uint64_t_u_u(i64 noundef %321, i64 noundef -5)
  %323 = icmp ne i64 %322, 0
  br i1 %323, label %324, label %327

324:                                              ; preds = %310
  %325 = load i32, ptr %5, align 4
  %326 = icmp ne i32 %325, 0
  br label %327

327:                                              ; preds = %324, %310
  %328 = phi i1 [ false, %310 ], [ %326, %324 ]
  %329 = zext i1 %328 to i32
  %330 = load i32, ptr %5, align 4
  %331 = icmp ult i32 %329, %330
  %332 = zext i1 %331 to i32
  %333 = icmp slt i32 %243, %332
  %334 = zext i1 %333 to i32
  %335 = load i32, ptr %56, align 4
  %336 = call i32 @safe_mod_func_uint32_t_u_u(i32 noundef %334, i32 noundef %335)
  store i32 %336, ptr @g_153, align 4
  %337 = load ptr, ptr %85, align 8
  %338 = load i32, ptr %337, align 4
  %339 = load i64, ptr %90, align 8
  %340 = load i32, ptr %56, align 4
  %341 = load i32, ptr %5, align 4
  %342 = icmp uge i32 %340, %341
  %343 = zext i1 %342 to i32
  %344 = icmp eq i32 1, %343
  %345 = xor i1 %344, true
  %346 = zext i1 %345 to i32
  %347 = load ptr, ptr %85, align 8
  %348 = load i32, ptr %347, align 4
  %349 = trunc i32 %348 to i16
  %350 = load ptr, ptr %15, align 8
  %351 = load i32, ptr %350, align 4
  %352 = trunc i32 %351 to i16
  %353 = call signext i16 @safe_mul_func_int16_t_s_s(i16 noundef signext -5036, i16 noundef signext %352)
  %354 = sext i16 %353 to i64
  %355 = icmp ne i64 %354, -3
  %356 = zext i1 %355 to i32
  %357 = trunc i32 %356 to i16
  %358 = call signext i16 @safe_add_func_int16_t_s_s(i16 noundef signext %349, i16 noundef signext %357)
  %359 = sext i16 %358 to i32
  store i32 %359, ptr %57, align 4
  %360 = load ptr, ptr @g_608, align 8
  store i32 %359, ptr %360, align 4
  %361 = call i32 @safe_unary_minus_func_uint32_t_u(i32 noundef %359)
  %362 = trunc i32 %361 to i8
  store i8 %362, ptr @g_1586, align 1
  %363 = sext i8 %362 to i32
  %364 = load ptr, ptr %15, align 8
  store i32 %363, ptr %364, align 4
  %365 = load i32, ptr %58, align 4
  %366 = xor i32 %365, %363
  store i32 %366, ptr %58, align 4
  %367 = load i32, ptr %56, align 4
  %368 = icmp slt i32 %366, %367
  %369 = zext i1 %368 to i32
  %370 = trunc i32 %369 to i16
  %371 = call signext i16 @safe_lshift_func_int16_t_s_u(i16 noundef signext %370, i32 noundef 12)
  %372 = sext i16 %371 to i32
  %373 = load volatile ptr, ptr null, align 8
  %374 = load volatile ptr, ptr %373, align 8
  %375 = load volatile i32, ptr %374, align 4
  %376 = icmp sgt i32 %372, %375
  %377 = zext i1 %376 to i32
  %378 = icmp slt i32 %346, %377
  %379 = zext i1 %378 to i32
  store i32 %379, ptr %23, align 4
  %380 = call i32 @safe_add_func_int32_t_s_s(i32 noundef 1, i32 noundef %379)
  %381 = trunc i32 %380 to i8
  %382 = load ptr, ptr @g_362, align 8
  store i8 %381, ptr %382, align 1
  %383 = call zeroext i8 @safe_rshift_func_uint8_t_u_u(i8 noundef zeroext %381, i32 noundef 6)
  %384 = call zeroext i8 @safe_mul_func_uint8_t_u_u(i8 noundef zeroext %383, i8 noundef zeroext 22)
  %385 = zext i8 %384 to i64
  %386 = icmp eq i64 %339, %385
  %387 = zext i1 %386 to i32
  %388 = sext i32 %387 to i64
  %389 = load i32, ptr %56, align 4
  %390 = sext i32 %389 to i64
  %391 = call i64 @safe_sub_func_int64_t_s_s(i64 noundef %388, i64 noundef %390)
  %392 = load ptr, ptr %85, align 8
  %393 = load i32, ptr %392, align 4
  store i32 %393, ptr %59, align 4
  %394 = icmp ne i32 %393, 0
  br i1 %394, label %395, label %396

395:                                              ; preds = %327
  br label %396

396:                                              ; preds = %395, %327
  %397 = phi i1 [ false, %327 ], [ false, %395 ]
  %398 = zext i1 %397 to i32
  %399 = load i32, ptr %5, align 4
  %400 = call i32 @safe_sub_func_int32_t_s_s(i32 noundef %398, i32 noundef %399)
  %401 = load i32, ptr %56, align 4
  %402 = icmp sge i32 %400, %401
  %403 = zext i1 %402 to i32
  %404 = load i8, ptr %24, align 1
  %405 = sext i8 %404 to i64
  %406 = call i64 @safe_unary_minus_func_uint64_t_u(i64 noundef %405)
  %407 = trunc i64 %406 to i16
  %408 = load i32, ptr %5, align 4
  %409 = trunc i32 %408 to i16
  %410 = call signext i16 @safe_mul_func_int16_t_s_s(i16 noundef signext %407, i16 noundef signext %409)
  %411 = sext i16 %410 to i32
  %412 = icmp ne i32 %411, 0
  br i1 %412, label %416, label %413

413:                                              ; preds = %396
  %414 = load volatile i32, ptr null, align 4
  %415 = icmp ne i32 %414, 0
  br label %416

416:                                              ; preds = %413, %396
  %417 = phi i1 [ true, %396 ], [ %415, %413 ]
  %418 = zext i1 %417 to i32
  %419 = icmp ne i32 %338, %418
  %420 = zext i1 %419 to i32
  store i32 %420, ptr @g_153, align 4
  br label %421

421:                                              ; preds = %416
  %422 = load i32, ptr @g_295, align 4
  %423 = zext i32 %422 to i64
  %424 = call i64 @safe_add_func_int64_t_s_s(i64 noundef %423, i64 noundef 6)
  %425 = trunc i64 %424 to i32
  store i32 %425, ptr @g_295, align 4
  br label %186, !llvm.loop !12

426:                                              ; preds = %186
  %427 = load volatile i64, ptr null, align 8
  %428 = add i64 %427, 1
  store volatile i64 %428, ptr null, align 8
  store i8 -16, ptr @g_1586, align 1
  br label %429

429:                                              ; preds = %600, %426
  %430 = load i8, ptr @g_1586, align 1
  %431 = sext i8 %430 to i32
  %432 = icmp slt i32 %431, 26
  br i1 %432, label %433, label %603

433:                                              ; preds = %429
  store ptr null, ptr %96, align 8
  store i32 -779566225, ptr %97, align 4
  store i32 776490271, ptr %98, align 4
  store i32 1914133212, ptr %99, align 4
  store i32 -8, ptr %100, align 4
  store i16 7, ptr %101, align 2
  store i32 849908007, ptr %102, align 4
  store i32 -3, ptr %103, align 4
  store ptr @g_79, ptr %104, align 8
  store i32 1, ptr %105, align 4
  store ptr getelementptr inbounds ([9 x [3 x ptr]], ptr null, i64 0, i64 8), ptr %107, align 8
  store ptr %29, ptr %108, align 8
  store i32 1800598416, ptr %109, align 4
  store ptr @g_361, ptr %110, align 8
  store i64 -7589897823946938736, ptr %111, align 8
  store ptr getelementptr inbounds ([9 x %union.U0], ptr getelementptr inbounds ([7 x [9 x %union.U0]], ptr getelementptr inbounds ([4 x [7 x [9 x %union.U0]]], ptr null, i64 0, i64 3), i64 0, i64 6), i64 0, i64 7), ptr %112, align 8
  store ptr %112, ptr %113, align 8
  store i32 0, ptr %114, align 4
  br label %434

434:                                              ; preds = %441, %433
  %435 = load i32, ptr %114, align 4
  %436 = icmp slt i32 %435, 4
  br i1 %436, label %437, label %444

437:                                              ; preds = %434
  %438 = load i32, ptr %114, align 4
  %439 = sext i32 %438 to i64
  %440 = getelementptr inbounds [4 x i32], ptr %106, i64 0, i64 %439
  store i32 -1, ptr %440, align 4
  br label %441

441:                                              ; preds = %437
  %442 = load i32, ptr %114, align 4
  %443 = add nsw i32 %442, 1
  store i32 %443, ptr %114, align 4
  br label %434, !llvm.loop !13

444:                                              ; preds = %434
  store i32 0, ptr @g_26, align 4
  br label %445

445:                                              ; preds = %596, %444
  %446 = load i32, ptr @g_26, align 4
  %447 = icmp ule i32 %446, 2
  br i1 %447, label %448, label %599

448:                                              ; preds = %445
  store i32 -1973669212, ptr %116, align 4
  store ptr null, ptr %117, align 8
  store ptr %97, ptr %118, align 8
  store ptr %59, ptr %119, align 8
  store ptr null, ptr %120, align 8
  store ptr @g_153, ptr %121, align 8
  %449 = getelementptr inbounds [10 x i32], ptr %6, i64 0, i64 3
  store ptr %449, ptr %122, align 8
  store ptr %58, ptr %123, align 8
  store ptr %97, ptr %124, align 8
  store i32 0, ptr %126, align 4
  br label %450

450:                                              ; preds = %457, %448
  %451 = load i32, ptr %126, align 4
  %452 = icmp slt i32 %451, 1
  br i1 %452, label %453, label %460

453:                                              ; preds = %450
  %454 = load i32, ptr %126, align 4
  %455 = sext i32 %454 to i64
  %456 = getelementptr inbounds [1 x i16], ptr %115, i64 0, i64 %455
  store i16 -1, ptr %456, align 2
  br label %457

457:                                              ; preds = %453
  %458 = load i32, ptr %126, align 4
  %459 = add nsw i32 %458, 1
  store i32 %459, ptr %126, align 4
  br label %450, !llvm.loop !14

460:                                              ; preds = %450
  store i32 0, ptr %126, align 4
  br label %461

461:                                              ; preds = %479, %460
  %462 = load i32, ptr %126, align 4
  %463 = icmp slt i32 %462, 1
  br i1 %463, label %464, label %482

464:                                              ; preds = %461
  store i32 0, ptr %127, align 4
  br label %465

465:                                              ; preds = %475, %464
  %466 = load i32, ptr %127, align 4
  %467 = icmp slt i32 %466, 10
  br i1 %467, label %468, label %478

468:                                              ; preds = %465
  %469 = load i32, ptr %126, align 4
  %470 = sext i32 %469 to i64
  %471 = getelementptr inbounds [1 x [10 x ptr]], ptr %125, i64 0, i64 %470
  %472 = load i32, ptr %127, align 4
  %473 = sext i32 %472 to i64
  %474 = getelementptr inbounds [10 x ptr], ptr %471, i64 0, i64 %473
  store ptr @g_153, ptr %474, align 8
  br label %475

475:                                              ; preds = %468
  %476 = load i32, ptr %127, align 4
  %477 = add nsw i32 %476, 1
  store i32 %477, ptr %127, align 4
  br label %465, !llvm.loop !15

478:                                              ; preds = %465
  br label %479

479:                                              ; preds = %478
  %480 = load i32, ptr %126, align 4
  %481 = add nsw i32 %480, 1
  store i32 %481, ptr %126, align 4
  br label %461, !llvm.loop !16

482:                                              ; preds = %461
  store i32 0, ptr @g_1134, align 4
  br label %483

483:                                              ; preds = %590, %482
  %484 = load i32, ptr @g_1134, align 4
  %485 = icmp sle i32 %484, 0
  br i1 %485, label %486, label %593

486:                                              ; preds = %483
  store ptr null, ptr %128, align 8
  store ptr %26, ptr %129, align 8
  store ptr null, ptr %130, align 8
  store ptr %24, ptr %131, align 8
  %487 = load i32, ptr @g_1134, align 4
  %488 = add nsw i32 %487, 6
  %489 = sext i32 %488 to i64
  %490 = getelementptr inbounds [8 x [3 x i32]], ptr %7, i64 0, i64 %489
  %491 = load i32, ptr @g_26, align 4
  %492 = zext i32 %491 to i64
  %493 = getelementptr inbounds [3 x i32], ptr %490, i64 0, i64 %492
  %494 = load i32, ptr %493, align 4
  %495 = icmp ne i32 %494, 0
  br i1 %495, label %496, label %551

496:                                              ; preds = %486
  %497 = load i32, ptr @g_26, align 4
  %498 = add i32 %497, 2
  %499 = zext i32 %498 to i64
  %500 = getelementptr inbounds [6 x [9 x [3 x i64]]], ptr null, i64 0, i64 %499
  %501 = load i32, ptr @g_26, align 4
  %502 = add i32 %501, 6
  %503 = zext i32 %502 to i64
  %504 = getelementptr inbounds [9 x [3 x i64]], ptr %500, i64 0, i64 %503
  %505 = load i32, ptr @g_26, align 4
  %506 = zext i32 %505 to i64
  %507 = getelementptr inbounds [3 x i64], ptr %504, i64 0, i64 %506
  %508 = load i64, ptr %507, align 8
  %509 = and i64 133, %508
  %510 = trunc i64 %509 to i16
  %511 = load i32, ptr @g_1134, align 4
  %512 = add nsw i32 %511, 1
  %513 = sext i32 %512 to i64
  %514 = getelementptr inbounds [6 x [9 x [3 x i64]]], ptr null, i64 0, i64 %513
  %515 = load i32, ptr @g_26, align 4
  %516 = add i32 %515, 1
  %517 = zext i32 %516 to i64
  %518 = getelementptr inbounds [9 x [3 x i64]], ptr %514, i64 0, i64 %517
  %519 = load i32, ptr @g_26, align 4
  %520 = zext i32 %519 to i64
  %521 = getelementptr inbounds [3 x i64], ptr %518, i64 0, i64 %520
  %522 = load i64, ptr %521, align 8
  %523 = trunc i64 %522 to i16
  %524 = load ptr, ptr null, align 8
  %525 = load ptr, ptr %524, align 8
  %526 = load i16, ptr %525, align 2
  %527 = zext i16 %526 to i32
  %528 = call zeroext i16 null(i16 noundef zeroext %523, i32 noundef %527)
  %529 = trunc i16 %528 to i8
  %530 = call zeroext i8 null(i8 noundef zeroext %529, i32 noundef 5)
  %531 = load ptr, ptr %26, align 8
  %532 = load ptr, ptr %129, align 8
  store ptr %531, ptr %532, align 8
  %533 = icmp eq ptr %531, null
  %534 = zext i1 %533 to i32
  %535 = load i32, ptr %5, align 4
  %536 = load i32, ptr %5, align 4
  %537 = icmp ult i32 %534, %536
  %538 = zext i1 %537 to i32
  %539 = load ptr, ptr %15, align 8
  %540 = load i32, ptr %539, align 4
  %541 = icmp sge i32 %538, %540
  %542 = zext i1 %541 to i32
  %543 = call zeroext i16 null(i16 noundef zeroext %510, i32 noundef 20008)
  %544 = trunc i16 %543 to i8
  %545 = getelementptr inbounds [1 x i16], ptr %115, i64 0, i64 0
  %546 = load i16, ptr %545, align 2
  %547 = trunc i16 %546 to i8
  %548 = call zeroext i8 @safe_sub_func_uint8_t_u_u(i8 noundef zeroext %544, i8 noundef zeroext %547)
  %549 = zext i8 %548 to i32
  %550 = icmp ne i32 %549, 0
  br label %551

551:                                              ; preds = %496, %486
  %552 = phi i1 [ false, %486 ], [ %550, %496 ]
  %553 = zext i1 %552 to i32
  %554 = load ptr, ptr %4, align 8
  %555 = call ptr @func_17(i32 noundef %553, ptr noundef %554)
  %556 = load ptr, ptr @g_1054, align 8
  store ptr %555, ptr %556, align 8
  %557 = load ptr, ptr %16, align 8
  br i1 false, label %558, label %559

558:                                              ; preds = %551
  br label %559

559:                                              ; preds = %558, %551
  %560 = phi i1 [ false, %551 ], [ true, %558 ]
  %561 = zext i1 %560 to i32
  %562 = load ptr, ptr %15, align 8
  %563 = load i32, ptr %562, align 4
  %564 = sext i32 %563 to i64
  %565 = icmp slt i64 34227, %564
  %566 = zext i1 %565 to i32
  %567 = load i32, ptr %5, align 4
  %568 = icmp uge i32 %566, %567
  %569 = zext i1 %568 to i32
  %570 = trunc i32 %569 to i8
  %571 = call zeroext i8 @safe_mul_func_uint8_t_u_u(i8 noundef zeroext %570, i8 noundef zeroext -7)
  %572 = zext i8 %571 to i32
  %573 = icmp ne i32 %572, 0
  br i1 %573, label %577, label %574

574:                                              ; preds = %559
  %575 = load i32, ptr %5, align 4
  %576 = icmp ne i32 %575, 0
  br label %577

577:                                              ; preds = %574, %559
  %578 = phi i1 [ true, %559 ], [ %576, %574 ]
  %579 = zext i1 %578 to i32
  %580 = sext i32 %579 to i64
  %581 = and i64 %580, 51077
  %582 = trunc i64 %581 to i32
  %583 = load i32, ptr @g_26, align 4
  %584 = add i32 %583, 4
  %585 = zext i32 %584 to i64
  %586 = getelementptr inbounds [8 x [3 x i32]], ptr %7, i64 0, i64 %585
  %587 = load i32, ptr @g_1134, align 4
  %588 = sext i32 %587 to i64
  %589 = getelementptr inbounds [3 x i32], ptr %586, i64 0, i64 %588
  store i32 %582, ptr %589, align 4
  br label %590

590:                                              ; preds = %577
  %591 = load i32, ptr @g_1134, align 4
  %592 = add nsw i32 %591, 1
  store i32 %592, ptr @g_1134, align 4
  br label %483, !llvm.loop !17

593:                                              ; preds = %483
  %594 = load i32, ptr %63, align 4
  %595 = add i32 %594, 1
  store i32 %595, ptr %63, align 4
  br label %596

596:                                              ; preds = %593
  %597 = load i32, ptr @g_26, align 4
  %598 = add i32 %597, 1
  store i32 %598, ptr @g_26, align 4
  br label %445, !llvm.loop !18

599:                                              ; preds = %445
  br label %600

600:                                              ; preds = %599
  %601 = load i8, ptr @g_1586, align 1
  %602 = call signext i8 @safe_add_func_int8_t_s_s(i8 noundef signext %601, i8 noundef signext 1)
  store i8 %602, ptr @g_1586, align 1
  br label %429, !llvm.loop !19

603:                                              ; preds = %429
  %604 = load volatile ptr, ptr null, align 8
  %605 = load ptr, ptr %604, align 8
  %606 = load i32, ptr %605, align 4
  %607 = icmp ne i32 %606, 0
  br i1 %607, label %608, label %609

608:                                              ; preds = %603
  br label %613

609:                                              ; preds = %603
  br label %610

610:                                              ; preds = %609
  %611 = load i8, ptr @g_79, align 1
  %612 = call zeroext i8 @safe_sub_func_uint8_t_u_u(i8 noundef zeroext %611, i8 noundef zeroext 1)
  store i8 %612, ptr @g_79, align 1
  br label %181, !llvm.loop !20

613:                                              ; preds = %608, %181
  %614 = load volatile ptr, ptr null, align 8
  %615 = load ptr, ptr %614, align 8
  store ptr %615, ptr %3, align 8
  br label %616

616:                                              ; preds = %613, %216
  %617 = load ptr, ptr %3, align 8
  ret ptr %617
}

; Function Attrs: noinline nounwind uwtable
declare dso_local ptr @func_17(i32 noundef, ptr noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local i32 @safe_add_func_int32_t_s_s(i32 noundef, i32 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local zeroext i8 @safe_div_func_uint8_t_u_u(i8 noundef zeroext, i8 noundef zeroext) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local i64 @safe_sub_func_uint64_t_u_u(i64 noundef, i64 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local signext i16 @safe_div_func_int16_t_s_s(i16 noundef signext, i16 noundef signext) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local signext i16 @safe_add_func_int16_t_s_s(i16 noundef signext, i16 noundef signext) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local i32 @safe_unary_minus_func_uint32_t_u(i32 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local zeroext i8 @safe_sub_func_uint8_t_u_u(i8 noundef zeroext, i8 noundef zeroext) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local zeroext i8 @safe_mul_func_uint8_t_u_u(i8 noundef zeroext, i8 noundef zeroext) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local i64 @safe_sub_func_int64_t_s_s(i64 noundef, i64 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local i32 @safe_div_func_uint32_t_u_u(i32 noundef, i32 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local i32 @safe_sub_func_int32_t_s_s(i32 noundef, i32 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local signext i16 @safe_rshift_func_int16_t_s_u(i16 noundef signext, i32 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local zeroext i8 @safe_rshift_func_uint8_t_u_u(i8 noundef zeroext, i32 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local i64 @safe_unary_minus_func_uint64_t_u(i64 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local signext i8 @safe_add_func_int8_t_s_s(i8 noundef signext, i8 noundef signext) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local i32 @safe_mod_func_uint32_t_u_u(i32 noundef, i32 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local signext i8 @safe_lshift_func_int8_t_s_u(i8 noundef signext, i32 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local signext i16 @safe_mul_func_int16_t_s_s(i16 noundef signext, i16 noundef signext) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local i64 @safe_add_func_int64_t_s_s(i64 noundef, i64 noundef) #1

; Function Attrs: noinline nounwind uwtable
declare dso_local signext i16 @safe_lshift_func_int16_t_s_u(i16 noundef signext, i32 noundef) #1

; uselistorder directives
uselistorder ptr null, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 47, 42, 13, 14, 15, 16, 17, 49, 18, 48, 19, 20, 21, 46, 22, 45, 23, 41, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 43, 37, 38, 44, 39, 51, 50, 40 }
uselistorder i64 8, { 1, 0, 2 }
uselistorder i64 0, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 45, 46, 47, 48, 17, 49, 18, 19, 20, 21, 22, 50, 51, 52, 23, 24, 25, 53, 54, 55, 56, 57, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 58, 59, 60, 61, 62, 63, 64, 65 }
uselistorder i64 6, { 3, 0, 1, 2, 4, 5, 6 }
uselistorder i64 1, { 0, 5, 6, 1, 2, 3, 4, 7, 8, 9, 10 }
uselistorder i64 2, { 0, 17, 18, 1, 19, 20, 21, 22, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }
uselistorder i64 3, { 0, 2, 1 }
uselistorder i64 5, { 0, 2, 1 }
uselistorder i64 7, { 1, 0 }
uselistorder ptr @safe_div_func_uint8_t_u_u, { 1, 0 }
uselistorder ptr @safe_sub_func_uint8_t_u_u, { 1, 0 }
uselistorder ptr @safe_mul_func_uint8_t_u_u, { 1, 0 }
uselistorder ptr @safe_mul_func_int16_t_s_s, { 1, 0 }

attributes #0 = { nocallback nofree nounwind willreturn memory(argmem: readwrite) }
attributes #1 = { noinline nounwind uwtable "frame-pointer"="all" "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }

!llvm.module.flags = !{!0, !1, !2, !3, !4}
!llvm.ident = !{!5}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{i32 8, !"PIC Level", i32 2}
!2 = !{i32 7, !"PIE Level", i32 2}
!3 = !{i32 7, !"uwtable", i32 2}
!4 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!6 = distinct !{!6, !7}
!7 = !{!"llvm.loop.mustprogress"}
!8 = distinct !{!8, !7}
!9 = distinct !{!9, !7}
!10 = distinct !{!10, !7}
!11 = distinct !{!11, !7}
!12 = distinct !{!12, !7}
!13 = distinct !{!13, !7}
!14 = distinct !{!14, !7}
!15 = distinct !{!15, !7}
!16 = distinct !{!16, !7}
!17 = distinct !{!17, !7}
!18 = distinct !{!18, !7}
!19 = distinct !{!19, !7}
!20 = distinct !{!20, !7}
